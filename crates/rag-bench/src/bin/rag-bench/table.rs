//! The table of figures the run prints: one row a figure, its target and whether it was met.

use std::fmt::Write as _;

/// One line of the table.
struct Row {
    figure: String,
    measured: String,
    target: String,
    met: Option<bool>,
}

#[derive(Default)]
pub(crate) struct Table {
    rows: Vec<Row>,
    notes: Vec<String>,
}

impl Table {
    pub(crate) fn row(
        &mut self,
        figure: impl Into<String>,
        measured: impl Into<String>,
        target: impl Into<String>,
        met: Option<bool>,
    ) {
        let row = Row {
            figure: figure.into(),
            measured: measured.into(),
            target: target.into(),
            met,
        };
        eprintln!("  {} = {}", row.figure, row.measured);
        self.rows.push(row);
    }

    /// A row for a figure that must not exceed `limit`: measured to two decimals and the target
    /// both written in `unit`, the target from the same `limit` the check uses.
    pub(crate) fn at_most(&mut self, figure: impl Into<String>, measured: f64, limit: f64, unit: &str) {
        self.row(
            figure,
            format!("{measured:.2}{unit}"),
            format!("<= {limit:?}{unit}"),
            Some(measured <= limit),
        );
    }

    /// A row for a property that must hold: `yes` or `NO`.
    pub(crate) fn holds(&mut self, figure: impl Into<String>, holds: bool) {
        self.row(figure, if holds { "yes" } else { "NO" }, "yes", Some(holds));
    }

    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    pub(crate) fn render(&self) -> String {
        let w0 = self.rows.iter().map(|r| r.figure.chars().count()).max().unwrap_or(0);
        let w1 = self.rows.iter().map(|r| r.measured.chars().count()).max().unwrap_or(0);
        let w2 = self.rows.iter().map(|r| r.target.chars().count()).max().unwrap_or(0);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "| {:w0$} | {:w1$} | {:w2$} | status |",
            "figure", "measured", "target"
        );
        let _ = writeln!(
            out,
            "|{}|{}|{}|--------|",
            "-".repeat(w0 + 2),
            "-".repeat(w1 + 2),
            "-".repeat(w2 + 2)
        );
        for r in &self.rows {
            let status = match r.met {
                Some(true) => "met",
                Some(false) => "MISSED",
                None => "info",
            };
            let _ = writeln!(
                out,
                "| {:w0$} | {:w1$} | {:w2$} | {status:6} |",
                r.figure, r.measured, r.target
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "\n- {note}");
        }
        out
    }
}
