//! What a command-line user expects: completions, man pages, examples in `--help`, `--quiet`
//! and `--color`.

use predicates::prelude::*;

use crate::{dir_with, ragctl, ragctl_in, scratch_dir};

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_ragctl()"),
        ("zsh", "#compdef ragctl"),
        ("fish", "complete -c ragctl"),
    ] {
        ragctl()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains(marker))
            .stdout(predicate::str::contains("max-input-bytes"));
    }
    ragctl().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn long_help_has_examples_and_short_help_stays_short() {
    for command in [&["--help"][..], &["chunk", "--help"], &["pack", "--help"]] {
        ragctl()
            .args(command)
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"));
    }
    ragctl()
        .args(["pack", "-h"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:").not());
}

#[test]
fn man_pages_are_generated_from_the_same_definitions() {
    let dir = scratch_dir("man");
    ragctl().arg("generate-man").arg(&dir).assert().success().stdout("");
    let page = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert!(page("ragctl.1").starts_with(".ie \\n(.g .ds Aq"), "roff");
    assert!(page("ragctl.1").contains(".TH ragctl 1"));
    assert!(page("ragctl-chunk.1").contains(".TH ragctl-chunk 1"));
    assert!(page("ragctl-chunk.1").contains("max\\-input\\-bytes"));
    assert!(page("ragctl-pack.1").contains("require\\-tenant"));
    assert!(page("ragctl-completions.1").contains(".TH ragctl-completions 1"));
    assert!(
        !dir.join("ragctl-generate-man.1").exists(),
        "hidden commands have no page"
    );
}

#[test]
fn color_follows_the_flag_and_no_color() {
    let missing = ["chunk", "/nonexistent.md"];
    ragctl()
        .args(missing)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: /nonexistent.md"));
    ragctl()
        .args(["--color", "always"])
        .args(missing)
        .env("NO_COLOR", "1")
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("\x1b[1;31merror:\x1b[0m /nonexistent.md"));
    ragctl()
        .args(missing)
        .args(["--color", "never"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("\x1b").not());
    ragctl().args(["--color", "sometimes"]).args(missing).assert().code(2);
}

#[test]
fn quiet_silences_warnings_and_notes_but_not_errors() {
    let dir = dir_with("quiet", &[("a.md", "# A\n")]);
    std::fs::write(dir.join("b.png"), [0u8]).unwrap();
    ragctl_in(&dir)
        .args(["chunk", ".", "missing.md", "-q"])
        .assert()
        .code(1)
        .stderr("error: missing.md: cannot read: No such file or directory (os error 2)\n");
}

#[test]
fn the_cli_reference_lists_every_document_type_and_extension() {
    use rag_chunker::DocumentType;
    let reference = std::fs::read_to_string(crate::workspace_root().join("docs/reference/cli.md")).unwrap();
    let types = reference
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("--type TYPE"))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    for doc_type in DocumentType::ALL {
        assert!(
            types.contains(doc_type.as_str()),
            "--type does not list {doc_type}: {types}"
        );
    }
    // The extensions the library reads, as its own error lists them.
    let Err(rag_core::ParseError::UnsupportedType { supported, .. }) = DocumentType::detect("x.unknown") else {
        panic!("x.unknown has a type")
    };
    let walked = reference
        .split("Only files of a supported extension are chunked (")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap();
    for extension in supported
        .split(['(', ')', ',', ' '])
        .filter(|word| word.starts_with('.'))
    {
        assert!(
            walked.contains(&format!("`{extension}`")),
            "the walk does not list {extension}: {walked}"
        );
    }
}
