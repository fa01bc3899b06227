//! What the syntax tree of each language means to the chunker: its grammar, which nodes are
//! definitions and what they are called, which are wrappers of a definition (decorators,
//! `export`, `template<...>`), and which belong to the definition after them (doc comments,
//! attributes).

use tree_sitter::Node;

use super::Language;

/// What a definition defines, which decides a chunk's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DefKind {
    /// A function or a method.
    Function,
    /// A type: class, struct, enum, union, trait, interface, impl block, Go type.
    Class,
    /// A namespace: a Rust `mod` with a body, a C++ or TypeScript namespace.
    Namespace,
}

/// A definition node: what it defines and its title (`def invoke`, `impl Searcher`).
#[derive(Debug, Clone)]
pub(crate) struct Definition {
    pub(crate) kind: DefKind,
    pub(crate) title: String,
}

/// The tree-sitter grammar of `language`, or `None` when this build left it out.
pub(crate) fn grammar(language: Language) -> Option<tree_sitter::Language> {
    match language {
        #[cfg(feature = "code-python")]
        Language::Python => Some(tree_sitter_python::LANGUAGE.into()),
        #[cfg(feature = "code-rust")]
        Language::Rust => Some(tree_sitter_rust::LANGUAGE.into()),
        #[cfg(feature = "code-javascript")]
        Language::JavaScript => Some(tree_sitter_javascript::LANGUAGE.into()),
        #[cfg(feature = "code-typescript")]
        Language::TypeScript => Some(tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()),
        #[cfg(feature = "code-typescript")]
        Language::Tsx => Some(tree_sitter_typescript::LANGUAGE_TSX.into()),
        #[cfg(feature = "code-go")]
        Language::Go => Some(tree_sitter_go::LANGUAGE.into()),
        #[cfg(feature = "code-java")]
        Language::Java => Some(tree_sitter_java::LANGUAGE.into()),
        #[cfg(feature = "code-c")]
        Language::C => Some(tree_sitter_c::LANGUAGE.into()),
        #[cfg(feature = "code-cpp")]
        Language::Cpp => Some(tree_sitter_cpp::LANGUAGE.into()),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// Whether `node` belongs to the definition right after it when nothing but one line break
/// separates them: a comment (doc comments are comments to tree-sitter) or an outer attribute.
pub(crate) fn is_leading(node: Node<'_>) -> bool {
    let kind = node.kind();
    kind.ends_with("comment") || matches!(kind, "attribute_item" | "decorator" | "attribute_declaration")
}

/// Whether `node` wraps a definition that comes with something of its own (Python decorators,
/// JavaScript `export`, C++ `template<...>`): the wrapper is the definition's whole extent.
fn is_wrapper(language: Language, kind: &str) -> bool {
    match language {
        Language::Python => kind == "decorated_definition",
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            matches!(kind, "export_statement" | "ambient_declaration")
        }
        Language::Cpp => kind == "template_declaration",
        _ => false,
    }
}

/// The most wrappers looked through for the definition inside (`export declare ...`,
/// `template<...> template<...> ...`): a bound, so that no input makes the search deep.
const MAX_WRAPPERS: usize = 4;

/// The definition `node` is, looking through wrappers: what it defines and its title, or `None`
/// for any other node. `inner` is the node that holds the definition's own children (the node
/// itself, or the definition a wrapper holds).
pub(crate) fn definition<'t>(language: Language, node: Node<'t>, text: &str) -> Option<(Definition, Node<'t>)> {
    let mut inner = node;
    for _ in 0..MAX_WRAPPERS {
        if !is_wrapper(language, inner.kind()) {
            return own_definition(language, inner, text).map(|definition| (definition, inner));
        }
        let mut cursor = inner.walk();
        let child = inner.named_children(&mut cursor).find(|child| {
            !is_leading(*child)
                && (is_wrapper(language, child.kind()) || own_definition(language, *child, text).is_some())
        })?;
        inner = child;
    }
    None
}

/// The definition `node` itself is (no wrappers looked through).
fn own_definition(language: Language, node: Node<'_>, text: &str) -> Option<Definition> {
    use DefKind::{Class, Function, Namespace};
    let kind = node.kind();
    let named = |def: DefKind, keyword: &str| {
        let name = field_text(node, "name", text).unwrap_or("");
        Some(Definition {
            kind: def,
            title: join(keyword, name),
        })
    };
    match (language, kind) {
        (Language::Python, "function_definition") => named(Function, "def"),
        (Language::Python, "class_definition") => named(Class, "class"),
        (Language::Rust, "function_item" | "function_signature_item") => named(Function, "fn"),
        (Language::Rust, "struct_item") => named(Class, "struct"),
        (Language::Rust, "enum_item") => named(Class, "enum"),
        (Language::Rust, "union_item") => named(Class, "union"),
        (Language::Rust, "trait_item") => named(Class, "trait"),
        (Language::Rust, "macro_definition") => named(Function, "macro_rules!"),
        (Language::Rust, "mod_item") if node.child_by_field_name("body").is_some() => named(Namespace, "mod"),
        (Language::Rust, "impl_item") => {
            let ty = field_text(node, "type", text).unwrap_or("");
            let title = match field_text(node, "trait", text) {
                Some(tr) => format!("impl {tr} for {ty}"),
                None => join("impl", ty),
            };
            Some(Definition { kind: Class, title })
        }
        (Language::JavaScript | Language::TypeScript | Language::Tsx, _) => script_definition(node, text),
        (Language::Go, "function_declaration") => named(Function, "func"),
        (Language::Go, "method_declaration") => {
            let receiver = field_text(node, "receiver", text).unwrap_or("");
            let name = field_text(node, "name", text).unwrap_or("");
            Some(Definition {
                kind: Function,
                title: format!("func {receiver} {name}"),
            })
        }
        (Language::Go, "type_declaration") => {
            let mut cursor = node.walk();
            let spec = node
                .named_children(&mut cursor)
                .find(|c| c.kind().starts_with("type_"))?;
            let name = field_text(spec, "name", text).unwrap_or("");
            Some(Definition {
                kind: Class,
                title: join("type", name),
            })
        }
        (Language::Java, "class_declaration") => named(Class, "class"),
        (Language::Java, "interface_declaration") => named(Class, "interface"),
        (Language::Java, "enum_declaration") => named(Class, "enum"),
        (Language::Java, "record_declaration") => named(Class, "record"),
        (Language::Java, "annotation_type_declaration") => named(Class, "@interface"),
        (Language::Java, "method_declaration" | "constructor_declaration" | "compact_constructor_declaration") => {
            call_title(Function, field_text(node, "name", text))
        }
        (Language::C | Language::Cpp, "function_definition") => call_title(Function, declarator_name(node, text)),
        (
            Language::C | Language::Cpp,
            "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier",
        ) if node.child_by_field_name("body").is_some() => {
            let keyword = kind.trim_end_matches("_specifier");
            named(Class, keyword)
        }
        (Language::C | Language::Cpp, "type_definition") if has_body_type(node) => {
            let name = field_text(node, "declarator", text).unwrap_or("");
            Some(Definition {
                kind: Class,
                title: join("typedef", name),
            })
        }
        (Language::Cpp, "namespace_definition") => named(Namespace, "namespace"),
        _ => None,
    }
}

/// The definitions of JavaScript and TypeScript, including `const f = () => ...`.
fn script_definition(node: Node<'_>, text: &str) -> Option<Definition> {
    use DefKind::{Class, Function, Namespace};
    let name = || field_text(node, "name", text).unwrap_or("");
    let def = |kind: DefKind, title: String| Some(Definition { kind, title });
    match node.kind() {
        "function_declaration" => def(Function, join("function", name())),
        "generator_function_declaration" => def(Function, join("function*", name())),
        "class_declaration" => def(Class, join("class", name())),
        "abstract_class_declaration" => def(Class, join("abstract class", name())),
        "interface_declaration" => def(Class, join("interface", name())),
        "enum_declaration" => def(Class, join("enum", name())),
        "internal_module" => def(Namespace, join("namespace", name())),
        "module" => def(Namespace, join("module", name())),
        "method_definition" => call_title(Function, Some(name())),
        "lexical_declaration" | "variable_declaration" => {
            // `const handler = async (req) => {...}`: a function by another syntax.
            let mut cursor = node.walk();
            let declarator = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "variable_declarator")?;
            let value = declarator.child_by_field_name("value")?;
            if !matches!(
                value.kind(),
                "arrow_function" | "function_expression" | "function" | "generator_function" | "class"
            ) {
                return None;
            }
            let keyword = node
                .child(0)
                .map_or("const", |first| &text[first.start_byte()..first.end_byte()]);
            let name = field_text(declarator, "name", text).unwrap_or("");
            let kind = if value.kind() == "class" { Class } else { Function };
            def(kind, join(keyword, name))
        }
        _ => None,
    }
}

/// `name()`, the title of a method or function in a language without a keyword for it: the name
/// up to any parameter list a misread declarator holds, its whitespace collapsed.
fn call_title(kind: DefKind, name: Option<&str>) -> Option<Definition> {
    let name = name.unwrap_or("");
    let name = name.split('(').next().unwrap_or(name);
    Some(Definition {
        kind,
        title: format!("{}()", name.split_whitespace().collect::<Vec<_>>().join(" ")),
    })
}

/// Whether a C `typedef` defines a struct, union or enum with a body (`typedef struct {...} T;`).
fn has_body_type(node: Node<'_>) -> bool {
    node.child_by_field_name("type")
        .is_some_and(|ty| ty.child_by_field_name("body").is_some())
}

/// The most declarators looked through for a C function's name (`*(*f)(int)`): a bound.
const MAX_DECLARATORS: usize = 8;

/// The name a C or C++ function definition declares: its declarator's, through pointer and
/// function declarators (`Foo::bar`, `operator==`, `~Foo`).
fn declarator_name<'a>(node: Node<'_>, text: &'a str) -> Option<&'a str> {
    let mut declarator = node.child_by_field_name("declarator")?;
    for _ in 0..MAX_DECLARATORS {
        match declarator.child_by_field_name("declarator") {
            Some(inner) => declarator = inner,
            None => break,
        }
    }
    text.get(declarator.start_byte()..declarator.end_byte())
}

/// The text of `node`'s child in `field`, if it has one.
fn field_text<'a>(node: Node<'_>, field: &str, text: &'a str) -> Option<&'a str> {
    let child = node.child_by_field_name(field)?;
    text.get(child.start_byte()..child.end_byte())
}

/// `keyword name`, or the keyword alone for an anonymous definition; whitespace in the name (a
/// receiver or a type over several lines) is collapsed.
fn join(keyword: &str, name: &str) -> String {
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    if name.is_empty() {
        keyword.to_owned()
    } else {
        format!("{keyword} {name}")
    }
}
