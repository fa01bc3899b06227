//! Violations and the report that collects them.

use std::fmt;

/// One broken promise: which rule, on which input, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule's name, e.g. `positions_increasing`.
    pub rule: &'static str,
    /// What went wrong, naming the chunk.
    pub detail: String,
}

/// The outcome of running a set of rules on one input.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The input the rules ran on (a document id or fixture name).
    pub input: String,
    /// The rules that ran, in order.
    pub rules_run: Vec<&'static str>,
    /// Every violation found.
    pub violations: Vec<Violation>,
}

impl Report {
    /// A report for `input` with nothing run yet.
    pub fn new(input: impl Into<String>) -> Self {
        Self {
            input: input.into(),
            ..Self::default()
        }
    }

    /// Whether every rule held.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }

    /// The names of the rules that broke, each once, in the order they ran.
    pub fn broken_rules(&self) -> Vec<&'static str> {
        let mut rules: Vec<&'static str> = Vec::new();
        for v in &self.violations {
            if !rules.contains(&v.rule) {
                rules.push(v.rule);
            }
        }
        rules
    }

    pub(crate) fn rule(&mut self, rule: &'static str, violations: impl IntoIterator<Item = String>) {
        self.rules_run.push(rule);
        // One rule can break on thousands of chunks; the first few say enough.
        const MAX_PER_RULE: usize = 5;
        let mut count = 0usize;
        for detail in violations {
            count += 1;
            if count <= MAX_PER_RULE {
                self.violations.push(Violation { rule, detail });
            }
        }
        if count > MAX_PER_RULE {
            self.violations.push(Violation {
                rule,
                detail: format!("... and {} more", count - MAX_PER_RULE),
            });
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.passed() {
            return write!(f, "{}: all {} rules hold", self.input, self.rules_run.len());
        }
        writeln!(f, "{}: {} violation(s)", self.input, self.violations.len())?;
        for v in &self.violations {
            writeln!(f, "  [{}] {}", v.rule, v.detail)?;
        }
        Ok(())
    }
}
