//! Spans reach an OTLP/HTTP collector: a receiver on 127.0.0.1 decodes what `ragctl pack` sends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use crate::ragctl;

/// Accepts HTTP requests until the test ends; sends each decoded body down the channel.
fn start_receiver() -> (String, mpsc::Receiver<(String, ExportTraceServiceRequest)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let mut reader = BufReader::new(stream);
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut content_length = 0usize;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
                if let Some((name, value)) = header.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    content_length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; content_length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let mut stream = reader.into_inner();
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            if let Ok(request) = ExportTraceServiceRequest::decode(body.as_slice()) {
                let path = request_line.split_whitespace().nth(1).unwrap_or_default().to_owned();
                if tx.send((path, request)).is_err() {
                    break;
                }
            }
        }
    });
    (format!("http://{addr}"), rx)
}

/// The first batch the receiver decodes, checked to come on the traces path; the spans named
/// `name` in it.
fn received_spans(received: &mpsc::Receiver<(String, ExportTraceServiceRequest)>, name: &str) -> Vec<Span> {
    let (path, request) = received
        .recv_timeout(Duration::from_secs(20))
        .expect("the exporter sent a batch");
    assert_eq!(path, "/v1/traces");
    let resource = request.resource_spans[0].resource.as_ref().unwrap();
    let service = resource.attributes.iter().find(|kv| kv.key == "service.name").unwrap();
    assert_eq!(
        service.value.as_ref().unwrap().value,
        Some(AnyValue::StringValue("ragctl".into()))
    );
    request
        .resource_spans
        .into_iter()
        .flat_map(|rs| rs.scope_spans)
        .flat_map(|ss| ss.spans)
        .filter(|s| s.name == name)
        .collect()
}

/// The value of a span's attribute `key`, if it has one.
fn attr(span: &Span, key: &str) -> Option<AnyValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.clone())
        .and_then(|v| v.value)
}

#[test]
fn pack_exports_its_span_over_otlp_http() {
    let (endpoint, received) = start_receiver();
    let input = r#"{"id":"a","document_id":"d","content":"Rerankers score pairs jointly.","score":0.9,"token_count":6}
{"id":"b","document_id":"d","content":"Rerankers score pairs jointly!","score":0.5,"token_count":6}"#;
    ragctl()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .args(["pack", "rerankers", "--input", "-", "--budget", "100"])
        .write_stdin(input)
        .assert()
        .success();
    let spans = received_spans(&received, "rag.pack");
    let value = |key: &str| attr(spans.first().expect("a rag.pack span"), key);
    assert_eq!(
        value("rag.tenant_id"),
        Some(AnyValue::StringValue("ragctl-local".into()))
    );
    assert_eq!(value("rag.pack.budget"), Some(AnyValue::IntValue(100)));
    assert_eq!(value("rag.pack.chunks_in"), Some(AnyValue::IntValue(2)));
    assert_eq!(value("rag.pack.chunks_out"), Some(AnyValue::IntValue(1)));
    assert_eq!(value("rag.pack.dropped_dedup"), Some(AnyValue::IntValue(1)));
    // The rendered context's own count (the lines claimed 6 tokens; cl100k says 8).
    assert_eq!(value("rag.pack.tokens_used"), Some(AnyValue::IntValue(8)));
}

#[test]
fn chunk_exports_one_span_per_document() {
    let (endpoint, received) = start_receiver();
    ragctl()
        .env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", format!("{endpoint}/v1/traces"))
        .args([
            "chunk",
            "-",
            "--type",
            "markdown",
            "--format",
            "jsonl",
            "--max-tokens",
            "32",
            "--overlap-tokens",
            "4",
        ])
        .write_stdin(crate::GUIDE_MD)
        .assert()
        .success();
    let spans = received_spans(&received, "rag.chunk");
    assert_eq!(spans.len(), 1);
    let value = |key: &str| attr(&spans[0], key);
    assert_eq!(value("rag.document_id"), Some(AnyValue::StringValue("-".into())));
    assert_eq!(
        value("rag.chunk.doc_type"),
        Some(AnyValue::StringValue("markdown".into()))
    );
    assert_eq!(value("rag.chunk.max_tokens"), Some(AnyValue::IntValue(32)));
    assert_eq!(
        value("rag.chunk.bytes"),
        Some(AnyValue::IntValue(crate::GUIDE_MD.len() as i64))
    );
    assert!(matches!(value("rag.chunk.chunks"), Some(AnyValue::IntValue(n)) if n > 2));
}

/// A collector that accepts connections and never answers.
fn silent_collector() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    format!("http://{addr}")
}

const INPUT: &str = r#"{"id":"a","document_id":"d","content":"Rerankers score pairs.","score":0.9,"token_count":4}"#;

/// The wall time of `ragctl pack` with these variables, and its stderr.
fn timed_pack(vars: &[(&str, &str)]) -> (Duration, String) {
    let mut cmd = ragctl();
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let start = Instant::now();
    let output = cmd
        .args(["pack", "rerankers", "--input", "-"])
        .write_stdin(INPUT)
        .assert()
        .success()
        .get_output()
        .clone();
    (start.elapsed(), String::from_utf8(output.stderr).unwrap())
}

#[test]
fn a_collector_that_never_answers_costs_well_under_a_second_and_one_warning() {
    let endpoint = silent_collector();
    let (plain, _) = timed_pack(&[]);
    let (stuck, stderr) = timed_pack(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)]);
    // The SDK's defaults (10 s export timeout, 5 s shutdown) held every run for 5 s.
    assert!(
        stuck < plain + Duration::from_millis(1500),
        "{stuck:?} with a stuck collector against {plain:?} without"
    );
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(stderr.starts_with("warning: traces not exported"), "{stderr}");
    // A refused connection: the same bound.
    let refused = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let (elapsed, stderr) = timed_pack(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &refused)]);
    assert!(elapsed < plain + Duration::from_millis(1500), "{elapsed:?}");
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
}

#[test]
fn the_standard_timeout_variable_sets_the_bound() {
    let endpoint = silent_collector();
    let (elapsed, stderr) = timed_pack(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
        ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1500"),
    ]);
    assert!(
        elapsed >= Duration::from_millis(1500),
        "the exporter waited its timeout: {elapsed:?}"
    );
    assert!(stderr.starts_with("warning: traces not exported"), "{stderr}");
}

#[test]
fn export_is_off_when_the_sdk_is_disabled_or_the_exporter_is_none() {
    let endpoint = silent_collector();
    let (plain, _) = timed_pack(&[]);
    for off in [("OTEL_SDK_DISABLED", "true"), ("OTEL_TRACES_EXPORTER", "none")] {
        let (elapsed, stderr) = timed_pack(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "3000"),
            off,
        ]);
        assert_eq!(stderr, "", "{off:?}: no exporter, no warning");
        assert!(elapsed < plain + Duration::from_millis(1500), "{off:?}: {elapsed:?}");
    }
}
