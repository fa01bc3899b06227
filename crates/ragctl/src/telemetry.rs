//! Tracing: spans go to an OTLP/HTTP collector when one is configured, and nowhere otherwise.
//!
//! The libraries emit `tracing` spans (`rag.chunk`, `rag.pack`); only the binary decides where they
//! go. Setting `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` turns export on;
//! the exporter reads the other standard `OTEL_EXPORTER_OTLP_*` variables itself. `RAGCTL_LOG`
//! (an `EnvFilter` directive such as `debug`) turns on log lines on stderr.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Keeps the exporter alive; [`Telemetry::shutdown`] flushes it before exit.
pub(crate) struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

/// Installs the subscriber. Never fails the command: a broken exporter setup is a warning.
pub(crate) fn init() -> Telemetry {
    let export = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
    let log_layer = std::env::var("RAGCTL_LOG").ok().map(|directives| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(EnvFilter::new(directives))
    });
    let mut provider = None;
    let otel_layer = if export {
        match build_provider() {
            Ok(p) => {
                let layer = tracing_opentelemetry::layer().with_tracer(p.tracer("ragctl"));
                provider = Some(p);
                Some(layer)
            }
            Err(err) => {
                eprintln!("warning: tracing export disabled: {err}");
                None
            }
        }
    } else {
        None
    };
    // Filters are per layer: a global filter in front of the OpenTelemetry layer would drop spans.
    let _ = tracing_subscriber::registry()
        .with(log_layer)
        .with(otel_layer)
        .try_init();
    Telemetry { provider }
}

fn build_provider() -> Result<SdkTracerProvider, opentelemetry_otlp::ExporterBuildError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder().with_http().build()?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name("ragctl").build())
        .build())
}

impl Telemetry {
    /// Flushes and stops the exporter; without this, the last batch of spans would be lost.
    pub(crate) fn shutdown(self) {
        if let Some(provider) = self.provider
            && let Err(err) = provider.shutdown()
        {
            eprintln!("warning: could not flush traces: {err}");
        }
    }
}
