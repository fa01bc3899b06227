//! The committed question files stay valid: every gold answer is found, exactly once or at its
//! stated occurrence, in its vendored document. `cargo xtask eval` checks the same before it runs,
//! but it is run by hand; this keeps a broken question or corpus refresh out of main.

use std::path::Path;

use rag_bench::eval::questions::{Origin, load_questions};

#[test]
fn every_committed_question_has_a_gold_span_and_the_set_meets_issue_10() {
    let eval = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/corpus");
    let mut total = 0;
    let mut handwritten = 0;
    for corpus in ["nodejs-api", "black"] {
        let dir = eval.join(corpus);
        let questions = match load_questions(&dir.join("questions.jsonl"), &dir.join("docs")) {
            Ok(questions) => questions,
            Err(errors) => panic!(
                "{corpus}: {}",
                errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
            ),
        };
        let files: std::collections::BTreeSet<&str> = questions.iter().map(|q| q.file.as_str()).collect();
        assert!(
            files.len() >= 15,
            "{corpus}: questions spread over only {} files",
            files.len()
        );
        total += questions.len();
        handwritten += questions.iter().filter(|q| q.origin == Origin::Handwritten).count();
    }
    assert!(total >= 150, "{total} questions, the evaluation needs at least 150");
    assert!(
        handwritten >= 50,
        "{handwritten} handwritten questions, the evaluation needs at least 50"
    );
}
