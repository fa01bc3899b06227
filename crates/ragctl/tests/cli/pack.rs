//! `ragctl pack`, and the chunk-to-pack pipe.

use predicates::prelude::*;
use rag_core::TokenCounter as _;
use serde_json::{Value, json};

use crate::{
    GUIDE_MD, chunk_line, dir_with, json_of, ragctl, ragctl_in, refused, scratch_dir, stderr_has, stdout_has,
    stdout_of, workspace_root,
};

/// `ragctl pack QUERY --input - --format json FLAGS` with `stdin`: the packed context's JSON.
fn pack_json(query: &str, flags: &[&str], stdin: impl Into<Vec<u8>>) -> Value {
    json_of(&stdout_of(
        ragctl()
            .args(["pack", query, "--input", "-", "--format", "json"])
            .args(flags)
            .write_stdin(stdin),
    ))
}

#[test]
fn the_demo_prints_the_packed_context_and_a_one_line_summary() {
    let out = stdout_of(ragctl().args(["pack", "how are near duplicates detected", "--demo", "--budget", "600"]));
    let text = String::from_utf8(out).unwrap();
    let context = json_of(&stdout_of(ragctl().args([
        "pack",
        "how are near duplicates detected",
        "--demo",
        "--budget",
        "600",
        "--format",
        "json",
    ])));
    let context = context["context"].as_str().unwrap();
    assert!(!context.is_empty());
    assert_eq!(
        text,
        format!("{context}\n\n{}\n", text.lines().last().unwrap()),
        "{text}"
    );
    let summary = text.lines().last().unwrap();
    assert!(
        summary.starts_with("-- ") && summary.contains(" of 600 tokens"),
        "{summary}"
    );
    assert!(summary.contains("input: demo corpus"), "{summary}");
}

#[test]
fn the_demo_corpus_packs_with_demo_and_says_so() {
    let assert = ragctl()
        .args([
            "pack",
            "how are near duplicates detected",
            "--top-k",
            "3",
            "--demo",
            "--format",
            "report",
        ])
        .assert();
    stdout_has(
        assert.success(),
        &[
            "query:          \"how are near duplicates detected\"",
            "input:          demo corpus",
            "tenant:         ragctl-local",
            "order:          lost_in_middle",
            "budget:         4000 tokens",
            "tokenizer:      tiktoken:cl100k_base",
            "scoring:        bm25",
            "#1",
        ],
    );
}

#[test]
fn chunk_output_pipes_into_pack() {
    let root = workspace_root();
    let chunked = stdout_of(ragctl_in(&root).args([
        "chunk",
        "docs",
        "--format",
        "jsonl",
        "--max-tokens",
        "200",
        "--overlap-tokens",
        "20",
    ]));
    let packed = pack_json("how are chunks deduplicated", &["--budget", "1500"], chunked);
    let chunks_in = packed["chunks_in"].as_u64().unwrap();
    let chunks_out = packed["chunks_out"].as_u64().unwrap();
    assert!(chunks_out > 0 && chunks_out < chunks_in);
    assert!(packed["tokens_used"].as_u64().unwrap() <= 1500);
    assert_eq!(packed["chunks"].as_array().unwrap().len() as u64, chunks_out);
    // A part cut to fit is no input: its original is in `dropped`, as cut to fit.
    let cut: Vec<&Value> = packed["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["metadata"].get("cut_from").is_some())
        .collect();
    for part in &cut {
        let original = &part["metadata"]["cut_from"]["id"];
        let record = packed["dropped"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["id"] == *original);
        assert_eq!(record.unwrap()["reason"], "cut_to_fit", "{part}");
    }
    assert_eq!(
        packed["dropped"].as_array().unwrap().len() as u64 + chunks_out - cut.len() as u64,
        chunks_in,
        "every input chunk is packed or has a drop reason"
    );
    assert!(packed["scoring"].as_str().unwrap().starts_with("bm25"));
}

/// Two scored chunks with cached counts, as JSON Lines: `a` (0.9) and `b` (0.5).
fn alpha_and_beta() -> String {
    [
        chunk_line("a", "Alpha text.", json!({"score": 0.9, "token_count": 3})),
        chunk_line("b", "Beta text.", json!({"score": 0.5, "token_count": 3})),
    ]
    .join("\n")
}

#[test]
fn the_context_format_renders_the_template() {
    let input = alpha_and_beta();
    let dir = dir_with("context", &[("in.jsonl", &input)]);
    ragctl_in(&dir)
        .args([
            "pack",
            "q",
            "--input",
            "in.jsonl",
            "--format",
            "context",
            "--order",
            "descending",
        ])
        .args(["--template", "[{id}] {content}", "--delimiter", "\n---\n"])
        .assert()
        .success()
        .stdout("[a] Alpha text.\n---\n[b] Beta text.\n");
}

#[test]
fn a_malformed_line_is_named_and_nothing_is_printed() {
    let input = [chunk_line("a", "ok", json!({})), "{\"id\": \"b\", oops".to_owned()].join("\n");
    let dir = dir_with("malformed", &[("in.jsonl", &input)]);
    refused(ragctl_in(&dir).args(["pack", "q", "--input", "in.jsonl"])).stderr(predicate::str::contains("in.jsonl:2:"));
}

#[test]
fn a_foreign_tenant_is_refused_naming_the_chunk() {
    let input = [
        chunk_line("mine", "ok", json!({})),
        chunk_line("theirs", "secret", json!({"tenant_id": "globex"})),
    ]
    .join("\n");
    refused(
        ragctl()
            .args(["pack", "q", "--input", "-", "--tenant", "acme"])
            .write_stdin(input),
    )
    .stderr(predicate::str::contains("chunk theirs belongs to tenant globex"));
}

#[test]
fn a_hugging_face_tokenizer_counts_chunks_without_token_count() {
    let tokenizer = workspace_root().join("crates/rag-tokens/tests/fixtures/tiny-bpe.tokenizer.json");
    let line = chunk_line("a", "Rerankers score (query, passage) pairs.", json!({"score": 1.0}));
    let packed = pack_json("pairs", &["--tokenizer", tokenizer.to_str().unwrap()], line);
    assert!(
        packed["tokenizer"]
            .as_str()
            .unwrap()
            .starts_with("hf:tiny-bpe.tokenizer.json@")
    );
    assert_eq!(packed["tokens_used"], 27);
}

#[test]
fn invalid_flag_values_are_usage_errors() {
    for args in [
        vec!["pack", "q", "--jaccard-threshold", "2"],
        vec!["pack", "q", "--budget", "0"],
        vec!["pack", "q", "--order", "random"],
        vec!["pack", "q", "--strategy", "best"],
        vec!["pack", "q", "--max-per-document", "0"],
    ] {
        ragctl().args(&args).assert().code(2);
    }
}

#[test]
fn a_pack_with_every_token_count_given_runs_on_stdin() {
    let input = (0..5)
        .map(|i| {
            chunk_line(
                &format!("c{i}"),
                &format!("chunk {i} {GUIDE_MD}"),
                json!({"score": i as f64, "token_count": 40}),
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let packed = pack_json("q", &["--budget", "100", "--strategy", "knapsack"], input);
    // The budget holds for the rendered context, whatever the lines claimed (40 tokens each).
    let context = packed["context"].as_str().unwrap();
    let tokens = rag_chunker::TiktokenCounter::cl100k().count(context).unwrap();
    assert_eq!(packed["tokens_used"], tokens);
    assert!(tokens <= 100, "{tokens}");
    assert_eq!(packed["scoring"], "given (every chunk had a score)");
    let dropped: Vec<&str> = packed["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["reason"].as_str().unwrap())
        .collect();
    // Each chunk renders to more than its claimed 40 tokens, so one fits in 100, not two.
    assert_eq!(packed["chunks_out"], 1);
    assert_eq!(dropped, ["over_budget"; 4]);
}

#[test]
fn piped_stdin_is_read_without_input() {
    let input = alpha_and_beta();
    let out = stdout_of(ragctl().args(["pack", "q", "--format", "json"]).write_stdin(input));
    let packed = json_of(&out);
    assert_eq!(packed["input"], "-");
    assert_eq!(packed["chunks_in"], 2, "the piped chunks, not the demo corpus");
    // Nothing piped in (stdin is empty, not a terminal): an empty pack, and a hint.
    ragctl()
        .args(["pack", "q", "--format", "report"])
        .assert()
        .success()
        .stdout(predicate::str::contains("chunks_in:      0"))
        .stderr(predicate::str::contains("warning: no chunks on stdin; --demo packs"));
    let demo = stdout_of(
        ragctl()
            .args(["pack", "q", "--demo", "--format", "json"])
            .write_stdin("ignored"),
    );
    let demo = json_of(&demo);
    assert_eq!(demo["input"], "demo corpus (the project's docs, built in)");
}

#[test]
fn top_k_shows_the_best_chunks_not_the_first_in_context_order() {
    // Lost in the middle puts the best first and the second best last.
    let input = (1..=6)
        .map(|i| {
            chunk_line(
                &format!("c{i}"),
                &format!("text {i}"),
                json!({"score": 1.0 - f64::from(i) / 10.0, "token_count": 2}),
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let out = stdout_of(
        ragctl()
            .args(["pack", "q", "--input", "-", "-k", "2", "--format", "report"])
            .write_stdin(input),
    );
    let text = String::from_utf8(out).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with('#')).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].contains("pos=1 ") && rows[0].contains("id=c1"), "{text}");
    assert!(rows[1].contains("pos=6 ") && rows[1].contains("id=c2"), "{text}");
}

#[test]
fn require_tenant_refuses_chunks_without_one_naming_the_line() {
    let input = [
        chunk_line("mine", "ok", json!({"tenant_id": "acme"})),
        json!({"id": "typo", "document_id": "d", "content": "x", "Tenant_Id": "globex"}).to_string(),
    ]
    .join("\n");
    let dir = dir_with("require-tenant", &[("in.jsonl", &input)]);
    refused(ragctl_in(&dir).args([
        "pack",
        "q",
        "--input",
        "in.jsonl",
        "--tenant",
        "acme",
        "--require-tenant",
    ]))
    .stderr(predicate::str::contains(
        "error: in.jsonl:2: chunk typo has no tenant_id, and a tenant is required",
    ));
}

#[test]
fn keys_that_look_like_known_fields_are_warned_about_once() {
    let input = [
        json!({"id": "a", "document_id": "d", "content": "x", "Tenant_Id": "globex"}),
        json!({"id": "b", "document_id": "d", "content": "y", "Tenant_Id": "globex", "token-count": 3}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let assert = ragctl()
        .args(["pack", "q", "--input", "-"])
        .write_stdin(input.clone())
        .assert()
        .success();
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert_eq!(
        stderr,
        "warning: -:1: unknown field `Tenant_Id` is read as an extra field, not as `tenant_id`\n\
         warning: -:2: unknown field `token-count` is read as an extra field, not as `token_count`\n"
    );
    ragctl()
        .args(["--quiet", "pack", "q", "--input", "-"])
        .write_stdin(input)
        .assert()
        .success()
        .stderr("");
}

#[test]
fn invalid_utf8_names_the_line_and_a_byte_order_mark_is_accepted() {
    let dir = scratch_dir("utf8");
    let mut input = b"\xef\xbb\xbf".to_vec();
    input.extend_from_slice(chunk_line("a", "ok", json!({})).as_bytes());
    std::fs::write(dir.join("bom.jsonl"), &input).unwrap();
    input.extend_from_slice(b"\n{\"id\":\"b\xff\"}\n");
    std::fs::write(dir.join("bad.jsonl"), &input).unwrap();
    ragctl_in(&dir)
        .args(["pack", "q", "--input", "bom.jsonl", "--format", "report"])
        .assert()
        .success()
        .stdout(predicate::str::contains("chunks_in:      1"));
    refused(ragctl_in(&dir).args(["pack", "q", "--input", "bad.jsonl"]))
        .stderr("error: bad.jsonl:2: invalid UTF-8 at byte 8 of the line\n");
}

#[test]
fn control_characters_are_escaped_in_text_output_and_kept_in_data_formats() {
    let evil_id = "c\x1b]0;pwned\x07";
    let input = chunk_line(
        evil_id,
        "Body \x1b[31mred\x1b[0m text.",
        json!({"score": 0.5, "token_count": 4}),
    );
    let out = stdout_of(
        ragctl()
            .args([
                "pack",
                "q",
                "--input",
                "-",
                "--tenant",
                "t\u{9b}2J",
                "--format",
                "report",
            ])
            .write_stdin(input.clone()),
    );
    let text = String::from_utf8(out).unwrap();
    assert!(
        !text.contains('\x1b') && !text.contains('\x07') && !text.contains('\u{9b}'),
        "{text:?}"
    );
    assert!(text.contains("id=c\\x1b]0;pwned\\x07"), "{text}");
    assert!(text.contains("tenant:         t\\u{9b}2J"), "{text}");
    assert!(text.contains("Body \\x1b[31mred"), "{text}");
    // The default text shows the context to a person: escaped too.
    let shown = String::from_utf8(stdout_of(
        ragctl().args(["pack", "q", "--input", "-"]).write_stdin(input.clone()),
    ))
    .unwrap();
    assert!(shown.starts_with("Body \\x1b[31mred\\x1b[0m text.\n"), "{shown:?}");
    // The context is data for a model: kept as is.
    ragctl()
        .args([
            "pack",
            "q",
            "--input",
            "-",
            "--format",
            "context",
            "--tenant",
            "t\u{9b}2J",
        ])
        .write_stdin(input.clone())
        .assert()
        .success()
        .stdout("Body \x1b[31mred\x1b[0m text.\n");
    // Errors that echo input are escaped too.
    let foreign = chunk_line("x\x1b[2J", "secret", json!({"tenant_id": "evil\x1b]0;t\x07"}));
    ragctl()
        .args(["pack", "q", "--input", "-"])
        .write_stdin(foreign)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("\x1b").not())
        .stderr(predicate::str::contains(
            "chunk x\\x1b[2J belongs to tenant evil\\x1b]0;t\\x07",
        ));
}

#[test]
fn chunks_need_every_label_the_principal_is_given() {
    let mut secret = json!({"id": "salary", "document_id": "hr", "content": "CEO salary is 12 million.",
        "acl_labels": ["hr-only"]});
    secret["score"] = json!(0.9);
    let public = json!({"id": "handbook", "document_id": "hb", "content": "Vacation is 25 days.", "score": 0.5});
    let input = format!("{secret}\n{public}\n");
    let pack = |labels: &[&str]| {
        let flags: Vec<&str> = labels.iter().flat_map(|label| ["--label", label]).collect();
        pack_json("vacation days", &flags, input.clone())
    };
    let nobody = pack(&[]);
    assert_eq!(nobody["hidden_by_acl"], 1);
    assert_eq!(nobody["chunks_out"], 1);
    let text = nobody.to_string();
    assert!(!text.contains("salary\"") && !text.contains("CEO"), "{text}");
    let hr = pack(&["hr-only"]);
    assert_eq!(hr["hidden_by_acl"], 0);
    assert_eq!(hr["chunks_out"], 2);
    assert!(hr["context"].as_str().unwrap().contains("CEO salary"));
}

#[test]
fn counts_from_another_tokenizer_are_recounted_and_verify_counts_reports_lies() {
    let long = "word ".repeat(400);
    let foreign = json!({"id": "o200k", "document_id": "d", "content": long, "token_count": 1,
        "tokenizer": "tiktoken:o200k_base", "score": 0.9});
    let liar = json!({"id": "liar", "document_id": "e", "content": "one two three four five six", "token_count": 1,
        "score": 0.8});
    let input = format!("{foreign}\n{liar}\n");
    let packed = pack_json("q", &["--budget", "100"], input.clone());
    let notes = packed["notes"].to_string();
    assert!(
        notes.contains("recounted 1 token counts made with another tokenizer than tiktoken:cl100k_base"),
        "{notes}"
    );
    assert_eq!(
        packed["chunks"][0]["id"], "liar",
        "the 400-token chunk claiming 1 does not fit"
    );
    assert!(packed["tokens_used"].as_u64().unwrap() <= 100);

    let verified = pack_json("q", &["--budget", "100", "--verify-counts"], input);
    let notes = verified["notes"].to_string();
    assert!(
        notes.contains(
            "verified 1 token counts under tiktoken:cl100k_base: 1 were wrong (first: chunk liar claimed 1, has 6)"
        ),
        "{notes}"
    );
}

#[test]
fn knapsack_keeps_the_best_section_unless_the_score_sum_is_asked_for() {
    // A passage ranked first and six short fragments scoring nearly as well, all sections of
    // documents: the budget holds the passage and one fragment, or the six fragments.
    let section = |id: &str, words: usize, score: f64| {
        // Distinct texts, or dedup would keep one fragment.
        let content = format!("{id} {}", vec!["word"; words - 1].join(" "));
        json!({"id": id, "document_id": id, "content": content, "score": score,
            "metadata": {"kind": "body", "heading_path": ["Guide", id]}})
    };
    let mut lines = vec![section("answer", 80, 1.0)];
    lines.extend((0..6).map(|i| section(&format!("fragment{i}"), 12, 0.9)));
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let packed_ids = |objective: &str| {
        let packed = pack_json(
            "q",
            &[
                "--strategy",
                "knapsack",
                "--order",
                "descending",
                "--breadcrumbs",
                "never",
                "--budget",
                "100",
                "--objective",
                objective,
            ],
            input.clone(),
        );
        let ids: Vec<String> = packed["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect();
        ids.join(" ")
    };
    assert_eq!(packed_ids("auto"), "answer fragment0");
    assert_eq!(packed_ids("rank-prior"), "answer fragment0");
    assert_eq!(
        packed_ids("score-sum"),
        "fragment0 fragment1 fragment2 fragment3 fragment4 fragment5"
    );
}

#[test]
fn an_input_that_is_not_jsonl_is_refused_with_how_to_make_jsonl() {
    // The commonest slip: `ragctl chunk` prints its text report unless asked for JSONL.
    let dir = dir_with("not-jsonl", &[("guide.md", GUIDE_MD)]);
    let report = stdout_of(ragctl_in(&dir).args(["chunk", "guide.md"]));
    std::fs::write(dir.join("chunks.jsonl"), report).unwrap();
    let hint = "(the input is not JSONL: each line must be one chunk as a JSON object; \
                `ragctl chunk --format jsonl` writes that)";
    stderr_has(
        refused(ragctl_in(&dir).args(["pack", "q", "--input", "chunks.jsonl"])),
        &["error: chunks.jsonl:1: expected value at line 1 column 1 ", hint],
    );
    // A JSON array of chunks is one line that is not a chunk; the message names what a line must be.
    let array = format!("[{}]\n", chunk_line("a", "alpha", json!({})));
    stderr_has(
        refused(ragctl().args(["pack", "q", "--input", "-"]).write_stdin(array)),
        &[
            "error: -:1: invalid type: sequence, expected a chunk (a JSON object)",
            hint,
        ],
    );
    // Once a line was a chunk, a bad line is a damaged line of a JSONL input: no hint.
    let damaged = format!("{}\nnot json\n", chunk_line("a", "alpha", json!({})));
    refused(ragctl().args(["pack", "q", "--input", "-"]).write_stdin(damaged))
        .stderr("error: -:2: expected ident at line 1 column 2\n");
}

#[test]
fn an_empty_context_is_warned_of_with_why() {
    // `--format context` prints only the context: an empty one must not reach a prompt unremarked.
    // Unscored, so BM25 scores them against the query and `off` holds no query term.
    let lines = [
        chunk_line(
            "big",
            "refund window refund window refund window",
            json!({"score": null}),
        ),
        chunk_line("off", "nothing about it", json!({"score": null})),
    ]
    .join("\n");
    let dir = dir_with("empty-context", &[("in.jsonl", &lines), ("none.jsonl", "")]);
    let pack = |input: &str, budget: &str| {
        ragctl_in(&dir)
            .args([
                "pack", "refund", "--format", "context", "--budget", budget, "--input", input,
            ])
            .assert()
            .success()
            .stdout("\n")
    };
    pack("in.jsonl", "3").stderr(
        "warning: the context is empty: none of the 2 chunks was packed (1 for lack of room in 3 tokens, \
         0 as duplicates, 1 for other reasons); --format json gives each chunk's reason\n",
    );
    pack("none.jsonl", "100").stderr("warning: the context is empty: none.jsonl holds no chunks\n");
    // Something packed: no warning.
    ragctl_in(&dir)
        .args(["pack", "refund", "--format", "context", "--input", "in.jsonl"])
        .assert()
        .success()
        .stdout("refund window refund window refund window\n")
        .stderr("");
}

#[test]
fn a_query_of_only_stop_words_is_warned_of_and_scores_zero_not_minus_zero() {
    let lines = chunk_line("a", "Read the file line by line.", json!({"score": null}));
    for query in ["", "how do I"] {
        let assert = ragctl()
            .args(["pack", query, "--input", "-", "--format", "json"])
            .write_stdin(lines.clone())
            .assert()
            .success()
            .stderr(format!(
                "warning: the query {query:?} has no term to score the chunks by (it is empty or only stop \
                 words such as \"how\", \"do\", \"the\"), so no chunk is relevant to it\n"
            ));
        let out = json_of(&assert.get_output().stdout);
        assert_eq!(out["chunks_out"], 0, "{query:?}");
        assert_eq!(out["dropped"][0]["reason"], "not_relevant", "{query:?}");
        assert_eq!(out["dropped"][0]["score"].to_string(), "0.0", "{query:?}");
    }
}

#[test]
fn a_query_finds_chinese_japanese_korean_and_thai_text() {
    // Each document is one sentence written without spaces between its words (Korean: with a
    // particle attached), and each query is one word of it.
    for (query, text) in [
        ("首都", "東京は日本の首都です。"),
        ("首都", "北京是中国的首都。"),
        ("수도", "서울은 한국의 수도입니다."),
        ("ภาษาไทย", "ฉันพูดภาษาไทยได้"),
    ] {
        let dir = dir_with("cjk", &[("doc.md", text)]);
        let chunked = stdout_of(ragctl_in(&dir).args(["chunk", "doc.md", "--format", "jsonl"]));
        let packed = pack_json(query, &[], chunked);
        assert_eq!(packed["chunks_out"], 1, "{query:?} in {text:?}: {packed}");
        assert_eq!(packed["context"], text);
    }
}

#[test]
fn a_query_of_more_than_1024_distinct_terms_is_refused() {
    let query: Vec<String> = (0..1025).map(|i| format!("term{i}")).collect();
    let input = chunk_line("a", "term1 and term2", json!({"score": null}));
    refused(
        ragctl()
            .args(["pack", &query.join(" "), "--input", "-"])
            .write_stdin(input),
    )
    .stderr(predicate::str::contains(
        "the query has 1025 distinct search terms; BM25 searches at most 1024",
    ));
}

#[test]
fn chunks_hidden_from_the_principal_shape_nothing_it_gets() {
    // Five hidden chunks saying "alpha" made "alpha" common in BM25 and so `b` beat `a`: a
    // principal could probe hidden text word by word. Nothing is computed from them now.
    let visible = [
        chunk_line("a", "alpha alpha alpha report", json!({"score": null})),
        chunk_line("b", "beta beta beta report", json!({"score": null})),
    ];
    let hidden: Vec<String> = (1..=5)
        .map(|i| {
            chunk_line(
                &format!("m{i}"),
                &format!("alpha merger note {i}"),
                json!({"score": null, "document_id": "board", "acl_labels": ["board"]}),
            )
        })
        .collect();
    let alone = visible.join("\n");
    let mixed = [&hidden[..], &visible[..]].concat().join("\n");
    for format in ["json", "text", "report", "context"] {
        let pack = |input: &str| {
            let out = stdout_of(
                ragctl()
                    .args([
                        "pack",
                        "alpha beta report",
                        "--input",
                        "-",
                        "--budget",
                        "6",
                        "--format",
                        format,
                    ])
                    .write_stdin(input.to_owned()),
            );
            String::from_utf8(out).unwrap()
        };
        let (alone, mixed) = (pack(&alone), pack(&mixed));
        // Only the input count and the hidden count may tell the two apart.
        let same = |out: &str| {
            out.lines()
                .filter(|l| !l.contains("chunks_in") && !l.contains("hidden_by_acl"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(same(&mixed), same(&alone), "{format}");
        if format == "json" {
            let packed = json_of(mixed.as_bytes());
            assert_eq!(packed["chunks"][0]["id"], "a");
            assert_eq!(packed["chunks"][0]["score"], 1.0);
            assert_eq!(packed["hidden_by_acl"], 5);
            assert!(!mixed.contains("merger") && !mixed.contains("m1"), "{mixed}");
        }
    }
}

#[test]
fn the_score_a_section_ranked_by_is_shown_in_the_report_and_in_json() {
    // The heading matched (0.9), its body did not (0.2): the body ranks by its heading's score.
    let input = [
        json!({"id": "h", "document_id": "d", "content": "# Refunds", "score": 0.9, "token_count": 3,
            "metadata": {"kind": "heading", "heading_path": ["Refunds"]}}),
        json!({"id": "b", "document_id": "d", "content": "Thirty days.", "score": 0.2, "token_count": 3,
            "parent_id": "h", "metadata": {"kind": "body", "heading_path": ["Refunds"]}}),
        json!({"id": "c", "document_id": "e", "content": "Other text.", "score": 0.5, "token_count": 3,
            "metadata": {"kind": "body", "heading_path": ["Other"]}}),
    ]
    .map(|line| line.to_string())
    .join("\n");
    let packed = pack_json("q", &["--budget", "100"], input.clone());
    let chunks = packed["chunks"].as_array().unwrap();
    let of = |id: &str| chunks.iter().find(|c| c["id"] == id).unwrap();
    assert_eq!(of("b")["score"], 0.2);
    assert_eq!(of("b")["effective_score"], 0.9);
    assert_eq!(of("c")["effective_score"], 0.5);
    let report = String::from_utf8(stdout_of(
        ragctl()
            .args(["pack", "q", "--input", "-", "--format", "report"])
            .write_stdin(input),
    ))
    .unwrap();
    let rows: Vec<&str> = report.lines().filter(|l| l.trim_start().starts_with('#')).collect();
    assert!(
        rows[0].contains("score=0.9000 (own 0.2000)") && rows[0].contains("id=b"),
        "{report}"
    );
    assert!(
        rows[1].contains("score=0.5000 ") && rows[1].contains("id=c"),
        "{report}"
    );
}
