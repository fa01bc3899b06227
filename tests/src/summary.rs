//! The summary table of a contract run: per rule and implementation, how many cases ran and how
//! many failed.

use std::fmt;

use crate::Report;

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The rule, e.g. `never_over_budget`.
    pub rule: &'static str,
    /// The implementation and its configuration, e.g. `HeadingAwareChunker cl100k_base 128/16`.
    pub implementation: String,
    /// Inputs the rule ran on.
    pub cases: usize,
    /// Inputs on which it broke.
    pub failures: usize,
    /// The first violation seen, with its input.
    pub first_failure: Option<String>,
}

/// Rows in the order rules were first seen, per implementation.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    rows: Vec<Row>,
}

impl Summary {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts every rule `report` ran as one case for `implementation`, failed if it broke.
    pub fn add(&mut self, implementation: &str, report: &Report) {
        for &rule in &report.rules_run {
            let failure = report
                .violations
                .iter()
                .find(|v| v.rule == rule)
                .map(|v| format!("{}: {}", report.input, v.detail));
            let row = match self
                .rows
                .iter_mut()
                .find(|r| r.rule == rule && r.implementation == implementation)
            {
                Some(row) => row,
                None => {
                    self.rows.push(Row {
                        rule,
                        implementation: implementation.to_owned(),
                        cases: 0,
                        failures: 0,
                        first_failure: None,
                    });
                    let last = self.rows.len() - 1;
                    &mut self.rows[last]
                }
            };
            row.cases += 1;
            if let Some(failure) = failure {
                row.failures += 1;
                row.first_failure.get_or_insert(failure);
            }
        }
    }

    /// The rows, grouped by implementation (in the order implementations were first seen), rules
    /// in the order the suite runs them.
    pub fn rows(&self) -> Vec<&Row> {
        let mut implementations: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !implementations.contains(&r.implementation.as_str()) {
                implementations.push(&r.implementation);
            }
        }
        let known = crate::chunker::RULES.iter().chain(&crate::packer::RULES);
        let rule_rank = |rule: &str| known.clone().position(|r| *r == rule).unwrap_or(usize::MAX);
        let mut rows: Vec<&Row> = self.rows.iter().collect();
        rows.sort_by_key(|r| {
            let group = implementations.iter().position(|i| *i == r.implementation);
            (group, rule_rank(r.rule))
        });
        rows
    }

    /// Whether every rule held on every case.
    pub fn passed(&self) -> bool {
        self.rows.iter().all(|r| r.failures == 0)
    }
}

impl fmt::Display for Summary {
    /// A plain-text table, then the first failure of each failing row.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule_w = self.rows.iter().map(|r| r.rule.len()).max().unwrap_or(4).max(4);
        let impl_w = self
            .rows
            .iter()
            .map(|r| r.implementation.len())
            .max()
            .unwrap_or(14)
            .max(14);
        writeln!(
            f,
            "{:<rule_w$}  {:<impl_w$}  {:>6}  result",
            "rule", "implementation", "cases"
        )?;
        writeln!(
            f,
            "{}  {}  {}  {}",
            "-".repeat(rule_w),
            "-".repeat(impl_w),
            "-".repeat(6),
            "-".repeat(6)
        )?;
        for r in self.rows() {
            let result = if r.failures == 0 {
                "pass".to_owned()
            } else {
                format!("FAIL ({} of {})", r.failures, r.cases)
            };
            writeln!(
                f,
                "{:<rule_w$}  {:<impl_w$}  {:>6}  {result}",
                r.rule, r.implementation, r.cases
            )?;
        }
        for r in self.rows().into_iter().filter(|r| r.failures > 0) {
            if let Some(first) = &r.first_failure {
                writeln!(f, "\n[{}] {}: {first}", r.rule, r.implementation)?;
            }
        }
        Ok(())
    }
}
