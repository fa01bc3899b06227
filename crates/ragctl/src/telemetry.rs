//! Tracing: spans go to an OTLP/HTTP collector when one is configured, and nowhere otherwise.
//!
//! The libraries emit `tracing` spans (`rag.chunk`, `rag.pack`); only the binary decides where they
//! go. Setting `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` turns export on,
//! unless `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`; the exporter reads the other
//! standard `OTEL_EXPORTER_OTLP_*` variables itself. `RAGCTL_LOG` (an `EnvFilter` directive such
//! as `debug`) turns on log lines on stderr.
//!
//! A collector must never hold the user: each export, and the flush at exit, is bounded by the
//! OTLP timeout (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`, in
//! milliseconds), which defaults here to [`DEFAULT_TIMEOUT`] instead of the SDK's 10 s. A failed
//! export is one warning.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::diagnostics;

/// The export timeout when no OTLP timeout variable is set: a collector on the same machine or
/// network answers in milliseconds, and a missing or stuck one costs the user at most this much.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_millis(300);

/// Keeps the exporter alive; [`Telemetry::shutdown`] flushes it before exit.
pub(crate) struct Telemetry {
    provider: Option<Installed>,
}

struct Installed {
    provider: SdkTracerProvider,
    timeout: Duration,
    /// The first export that failed: the batch processor only logs failures, and the user should
    /// hear about it once.
    first_failure: Arc<Mutex<Option<String>>>,
}

/// An exporter that remembers its first failure.
#[derive(Debug)]
struct FailureRecording<E> {
    inner: E,
    first_failure: Arc<Mutex<Option<String>>>,
}

impl<E: SpanExporter> SpanExporter for FailureRecording<E> {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        let export = self.inner.export(batch);
        async move {
            let result = export.await;
            if let Err(err) = &result {
                let mut first = self
                    .first_failure
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                first.get_or_insert_with(|| err.to_string());
            }
            result
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// What the environment asks for.
#[derive(Debug, PartialEq, Eq)]
enum Export {
    /// No exporter: no endpoint, or export turned off.
    Off,
    /// Export with this timeout per request (and for the flush at exit).
    Otlp { timeout: Duration },
    /// Export was asked for in a way this binary does not support: warn, and do not export.
    Unsupported(String),
}

/// Reads the standard variables through `var` (the process environment, or a test's).
fn export_from_env(var: impl Fn(&str) -> Option<String>) -> Export {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Export::Off;
    }
    let endpoint = set("OTEL_EXPORTER_OTLP_ENDPOINT").or_else(|| set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"));
    match set("OTEL_TRACES_EXPORTER")
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        Some("none") => return Export::Off,
        None | Some("otlp") => {}
        Some(other) => {
            return if endpoint.is_some() {
                Export::Unsupported(format!(
                    "OTEL_TRACES_EXPORTER={other} is not supported (otlp, none); traces are not exported"
                ))
            } else {
                Export::Off
            };
        }
    }
    if endpoint.is_none() {
        return Export::Off;
    }
    let millis = |name: &str| set(name).and_then(|v| v.trim().parse::<u64>().ok());
    let timeout = millis("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        .or_else(|| millis("OTEL_EXPORTER_OTLP_TIMEOUT"))
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    Export::Otlp { timeout }
}

/// Installs the subscriber. Never fails the command: a broken exporter setup is a warning.
pub(crate) fn init() -> Telemetry {
    let log_layer = std::env::var("RAGCTL_LOG").ok().map(|directives| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(EnvFilter::new(directives))
    });
    let mut provider = None;
    let otel_layer = match export_from_env(|name| std::env::var(name).ok()) {
        Export::Off => None,
        Export::Unsupported(message) => {
            diagnostics::warning(&message);
            None
        }
        Export::Otlp { timeout } => match build_provider(timeout) {
            Ok(installed) => {
                let layer = tracing_opentelemetry::layer().with_tracer(installed.provider.tracer("ragctl"));
                provider = Some(installed);
                Some(layer)
            }
            Err(err) => {
                diagnostics::warning(&format!("tracing export disabled: {err}"));
                None
            }
        },
    };
    // Filters are per layer: a global filter in front of the OpenTelemetry layer would drop spans.
    let _ = tracing_subscriber::registry()
        .with(log_layer)
        .with(otel_layer)
        .try_init();
    Telemetry { provider }
}

fn build_provider(timeout: Duration) -> Result<Installed, opentelemetry_otlp::ExporterBuildError> {
    // The timeout is set here because the SDK's own default (10 s) is what a stuck collector
    // would cost every run; retries stay within it.
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_timeout(timeout)
        .build()?;
    let first_failure = Arc::new(Mutex::new(None));
    let exporter = FailureRecording {
        inner: exporter,
        first_failure: Arc::clone(&first_failure),
    };
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name("ragctl").build())
        .build();
    Ok(Installed {
        provider,
        timeout,
        first_failure,
    })
}

impl Telemetry {
    /// Flushes and stops the exporter, waiting at most the export timeout (and a little for the
    /// exporter's thread to report); without this, the last batch of spans would be lost.
    pub(crate) fn shutdown(self) {
        let Some(installed) = self.provider else { return };
        let shutdown = installed
            .provider
            .shutdown_with_timeout(installed.timeout + Duration::from_millis(50));
        let failure = installed
            .first_failure
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        let reason = match (failure, shutdown) {
            (Some(failure), _) => failure,
            (None, Err(err)) => err.to_string(),
            (None, Ok(())) => return,
        };
        diagnostics::warning(&format!(
            "traces not exported (timeout {} ms, OTEL_EXPORTER_OTLP_TIMEOUT sets it): {reason}",
            installed.timeout.as_millis()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(vars: &[(&str, &str)]) -> Export {
        export_from_env(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn the_standard_variables_turn_export_on_and_off() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        assert_eq!(export(&[]), Export::Off);
        assert_eq!(
            export(&[endpoint]),
            Export::Otlp {
                timeout: DEFAULT_TIMEOUT
            }
        );
        assert_eq!(export(&[endpoint, ("OTEL_SDK_DISABLED", "TRUE")]), Export::Off);
        assert_eq!(
            export(&[endpoint, ("OTEL_SDK_DISABLED", "false")]),
            Export::Otlp {
                timeout: DEFAULT_TIMEOUT
            }
        );
        assert_eq!(export(&[endpoint, ("OTEL_TRACES_EXPORTER", "none")]), Export::Off);
        assert!(matches!(
            export(&[endpoint, ("OTEL_TRACES_EXPORTER", "zipkin")]),
            Export::Unsupported(m) if m.contains("zipkin")
        ));
        assert_eq!(
            export(&[endpoint, ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")]),
            Export::Otlp {
                timeout: Duration::from_secs(2)
            }
        );
        assert_eq!(
            export(&[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://x/v1/traces"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000"),
                ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "100"),
            ]),
            Export::Otlp {
                timeout: Duration::from_millis(100)
            }
        );
    }
}
