//! The `rag.pack` span as an OpenTelemetry backend receives it, through `tracing-opentelemetry`.

use opentelemetry::trace::{Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use rag_core::{Chunk, PackerError, RequestContext, SelectionStrategy};
use rag_packer::{ContextPacker, PackerConfig};
use tracing_subscriber::layer::SubscriberExt;

/// Runs `f` with a thread-local subscriber exporting to memory, and returns the finished spans.
fn capture(f: impl FnOnce()) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("rag-packer-test")));
    tracing::subscriber::with_default(subscriber, f);
    provider
        .force_flush()
        .expect("the simple exporter flushes synchronously");
    exporter
        .get_finished_spans()
        .expect("the in-memory exporter is readable")
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> &'a Value {
    span.attributes
        .iter()
        .find(|KeyValue { key: k, .. }| k.as_str() == key)
        .map(|kv| &kv.value)
        .unwrap_or_else(|| panic!("no attribute {key} in {:?}", span.attributes))
}

fn chunk(id: &str, text: &str, score: f64) -> Chunk {
    let mut c = Chunk::with_content(id, "doc", "acme", text);
    c.score = Some(score);
    c.token_count = Some(10);
    c
}

#[test]
fn a_pack_exports_one_span_with_its_numbers() {
    let packer = ContextPacker::new(
        PackerConfig::builder()
            .with_strategy(SelectionStrategy::Knapsack)
            .build()
            .unwrap(),
    );
    let chunks = vec![
        chunk("a", "The refund window is 30 days.", 0.9),
        chunk("b", "the refund window is 30 days", 0.8),
        chunk("c", "The refund window is 14 days.", 0.7),
        chunk("d", "Unrelated text.", 0.1),
    ];
    let spans = capture(|| {
        packer
            .pack_blocking(&RequestContext::local("acme"), chunks, 25)
            .unwrap();
    });
    assert_eq!(spans.len(), 1);
    let span = &spans[0];
    assert_eq!(span.name, "rag.pack");
    assert_eq!(span.status, Status::Unset);
    let expected = [
        ("rag.tenant_id", Value::from("acme")),
        ("rag.pack.order", Value::from("lost_in_middle")),
        ("rag.pack.strategy", Value::from("knapsack")),
        ("rag.pack.budget", Value::I64(25)),
        ("rag.pack.tokens_used", Value::I64(20)),
        ("rag.pack.chunks_in", Value::I64(4)),
        ("rag.pack.chunks_out", Value::I64(2)),
        ("rag.pack.dropped_dedup", Value::I64(1)),
        ("rag.pack.dropped_budget", Value::I64(1)),
        ("rag.pack.conflicts", Value::I64(1)),
        ("rag.tokenizer", Value::from("tiktoken:cl100k_base")),
    ];
    for (key, value) in expected {
        assert_eq!(attribute(span, key), &value, "{key}");
    }
}

#[test]
fn a_failed_pack_sets_the_span_status_to_error() {
    let packer = ContextPacker::new(PackerConfig::default());
    let foreign = Chunk::with_content("x", "doc", "globex", "text");
    let mut err = None;
    let spans = capture(|| {
        err = packer
            .pack_blocking(&RequestContext::local("acme"), vec![foreign], 100)
            .err();
    });
    let err = err.unwrap();
    assert!(matches!(err, PackerError::ForeignTenant { .. }));
    assert_eq!(spans.len(), 1);
    assert_eq!(spans[0].status, Status::error(err.to_string()));
    assert_eq!(attribute(&spans[0], "rag.pack.chunks_in"), &Value::I64(1));
}
