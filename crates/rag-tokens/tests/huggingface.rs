//! `HuggingFaceCounter` on a `tokenizer.json` the tests ship (`fixtures/tiny-bpe.tokenizer.json`,
//! a byte-level BPE made by `fixtures/make_tiny_tokenizer.py`, whose file adds `<s>`/`</s>` and
//! truncates to 16 tokens). The expected counts are what Hugging Face's own Python `tokenizers`
//! gives for the file with `add_special_tokens=False` and no truncation.

#![cfg(feature = "huggingface")]
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use rag_core::TokenCounter;
use rag_tokens::HuggingFaceCounter;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-bpe.tokenizer.json")
}

#[test]
fn counts_as_the_python_tokenizers_package_does() {
    let counter = HuggingFaceCounter::from_file(fixture()).unwrap();
    for (text, tokens) in [
        ("", 0),
        ("Rerankers score (query, passage) pairs.", 27),
        ("héllo wörld 日本", 18),
        ("line one\nline two\n\n  indented", 17),
    ] {
        assert_eq!(counter.count(text).unwrap(), tokens, "{text:?}");
        assert_eq!(counter.encode(text).unwrap().len(), tokens, "{text:?}");
    }
}

#[test]
fn special_tokens_and_the_files_truncation_do_not_apply() {
    let counter = HuggingFaceCounter::from_file(fixture()).unwrap();
    // The file truncates to 16 tokens and wraps every text in <s> (id 0) ... </s> (id 1); a
    // chunk's count has neither.
    let long = "Rerankers score (query, passage) pairs. ".repeat(50);
    assert_eq!(counter.count(&long).unwrap(), 1400);
    assert_eq!(counter.encode("pairs").unwrap(), [81, 66, 74, 83, 84]);
}

#[test]
fn names_the_file_and_its_content() {
    let counter = HuggingFaceCounter::from_file(fixture()).unwrap();
    let name = counter.name();
    assert!(name.starts_with("hf:tiny-bpe.tokenizer.json@"), "{name}");
    assert_eq!(name.len(), "hf:tiny-bpe.tokenizer.json@".len() + 12);
    assert!(!counter.splits_at_line_starts() && !counter.splits_at_spaces());
    assert_eq!(counter.path(), fixture());
}

#[test]
fn a_missing_or_malformed_file_is_an_error_naming_it() {
    let err = HuggingFaceCounter::from_file("no/such/tokenizer.json").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tokenizer no/such/tokenizer.json: cannot read: "),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("rag-tokens-hf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("tokenizer.json");
    std::fs::write(&bad, r#"{"model": "not a model"}"#).unwrap();
    let err = HuggingFaceCounter::from_file(&bad).unwrap_err();
    assert!(
        err.to_string()
            .contains("tokenizer.json: not a Hugging Face tokenizer.json: "),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn counts_on_several_threads_alike() {
    let counter = HuggingFaceCounter::from_file(fixture()).unwrap();
    let text = "Rerankers score pairs; the café's 3 TB index.\n\n  x".repeat(20);
    let want = counter.count(&text).unwrap();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4).map(|_| scope.spawn(|| counter.count(&text).unwrap())).collect();
        for thread in threads {
            assert_eq!(thread.join().unwrap(), want);
        }
    });
}

#[test]
fn a_file_over_the_size_limit_is_refused_naming_it_and_the_limit() {
    let dir = std::env::temp_dir().join(format!("rag-tokens-hf-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("tokenizer.json");
    std::fs::write(&big, vec![b' '; 2048]).unwrap();
    let err = HuggingFaceCounter::from_file_within(&big, 1024).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "tokenizer {}: file is larger than 1 KiB, the most a tokenizer.json may be",
            big.display()
        )
    );
    // At the limit the file is read (and here found not to be a tokenizer).
    let err = HuggingFaceCounter::from_file_within(&big, 2048).unwrap_err();
    assert!(err.to_string().contains("not a Hugging Face tokenizer.json"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(HuggingFaceCounter::MAX_FILE_BYTES, 64 << 20);
}

#[cfg(unix)]
#[test]
fn an_endless_device_is_read_only_one_byte_past_the_limit() {
    // /dev/zero has no size to refuse it by: reading stops at the limit instead of at the end of
    // memory.
    let err = HuggingFaceCounter::from_file_within("/dev/zero", 4096).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tokenizer /dev/zero: file is larger than 4 KiB, the most a tokenizer.json may be"
    );
    let err = HuggingFaceCounter::from_file("/dev/zero").unwrap_err();
    assert!(
        err.to_string()
            .ends_with("larger than 64 MiB, the most a tokenizer.json may be"),
        "{err}"
    );
}
