//! The files of `machine/`, `jit/` and the facade `src/` import each other without a
//! circle (issue 31): a file's module may use its own descendants and ancestors' items,
//! and otherwise only modules that never lead back to it. The graph is read from the
//! sources: every `use` of `crate::`, `self::` or `super::` paths, and every `crate::`
//! path written inline, outside comments and `#[cfg(test)]` modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file under `root` as a module path (`run/mod.rs` is `run`, `lib.rs` the
/// crate root).
fn modules(root: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let rel = path.strip_prefix(root).expect("under the root");
                let mut module: Module = rel
                    .with_extension("")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if module.last().is_some_and(|m| m == "mod") {
                    module.pop();
                }
                // `main.rs` beside `lib.rs` is the root of a crate of its own, which uses
                // the library by name: its modules are read as the library's, and it as
                // a module `main` that no path names.
                let binary = module == ["main"] && root.join("lib.rs").exists();
                if !binary && module.len() == 1 && (module[0] == "lib" || module[0] == "main") {
                    module.clear();
                }
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The source without line comments (docs included) and without its test module.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a `use` tree names, braces expanded (`a::{b, c::{d, e}}` is `a::b`, `a::c::d`
/// and `a::c::e`).
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let Some(close) = tree.rfind('}').filter(|&c| c > open) else {
        return vec![tree];
    };
    let base = tree[..open].trim_end_matches("::");
    let inner = &tree[open + 1..close];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |q| format!("{base}::{q}")))
        .collect()
}

/// The paths a file names: its `use` trees (each opens a line, as rustfmt leaves them)
/// and its inline `crate::` paths.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let code = format!("\n{code}");
    for (at, _) in code.match_indices('\n') {
        let line = code[at + 1..].trim_start();
        let line = match line.strip_prefix("pub") {
            Some(rest) if rest.starts_with('(') => rest.split_once(')').map_or("", |(_, r)| r),
            Some(rest) => rest,
            None => line,
        };
        if let Some(tree) = line.trim_start().strip_prefix("use ") {
            if let Some(end) = tree.find(';') {
                out.extend(expand(&tree[..end]));
            }
        }
    }
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            out.push(rest[..end].to_string());
        }
        rest = &rest[end.max(1)..];
    }
    out
}

/// The module a path from `from` leads into: the longest module that prefixes it.
fn target(from: &Module, path: &str, all: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut full: Module = match segs.first() {
        Some(&"crate") => Vec::new(),
        Some(&"self") => from.clone(),
        Some(&"super") => from.clone(),
        _ => return None,
    };
    let mut i = usize::from(segs[0] == "crate" || segs[0] == "self");
    while segs.get(i) == Some(&"super") {
        full.pop();
        i += 1;
    }
    full.extend(segs[i..].iter().map(|s| s.to_string()));
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| all.contains_key(m))
}

/// The import graph's edges between modules that are not each other's ancestors.
fn graph(root: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let all = modules(root);
    let mut edges = BTreeMap::new();
    for (module, path) in &all {
        let mut to = BTreeSet::new();
        for p in paths(&code_of(path)) {
            if let Some(t) = target(module, &p, &all) {
                if !module.starts_with(&t) && !t.starts_with(module) {
                    to.insert(t);
                }
            }
        }
        edges.insert(module.clone(), to);
    }
    edges
}

/// A circle of the graph, as the modules along it, if there is one.
fn circle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        m: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        done: &mut BTreeSet<Module>,
        path: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            return Some(path[at..].to_vec());
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.clone());
        for next in &edges[m] {
            if let Some(c) = visit(next, edges, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.clone());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut done, &mut Vec::new()))
}

fn assert_no_circle(crate_dir: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(crate_dir);
    let edges = graph(&root);
    assert!(
        edges.len() > 3,
        "{crate_dir}: only {} files read",
        edges.len()
    );
    if let Some(c) = circle(&edges) {
        let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
        panic!(
            "{crate_dir}: import circle {} -> {}",
            names.join(" -> "),
            names[0]
        );
    }
}

#[test]
fn machine_files_import_without_a_circle() {
    assert_no_circle("machine/src");
}

#[test]
fn jit_files_import_without_a_circle() {
    assert_no_circle("jit/src");
}

#[test]
fn facade_files_import_without_a_circle() {
    assert_no_circle("src");
}

/// The reader finds the circles it is meant to find: two files that use each other, one
/// through a braced `use` and the other through an inline path.
#[test]
fn a_circle_is_found() {
    let dir = std::env::temp_dir().join(format!("gpu16-module-graph-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("run")).expect("a scratch directory");
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod run;\n"),
        ("a.rs", "use crate::{b::{One, Two}, run};\n"),
        (
            "b.rs",
            "fn f() { crate::a::g(); }\n// crate::run::x in a comment\n",
        ),
        ("run/mod.rs", "mod inner;\nuse super::b;\n"),
        ("run/inner.rs", "use super::super::a;\nuse super::Thing;\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("a scratch file");
    }
    let edges = graph(&dir);
    std::fs::remove_dir_all(&dir).ok();
    let m = |s: &str| -> Module {
        s.split('/')
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect()
    };
    assert_eq!(edges[&m("a")], BTreeSet::from([m("b"), m("run")]));
    assert_eq!(edges[&m("b")], BTreeSet::from([m("a")]));
    // A child's use of its parent is no edge; a grandchild's of a sibling is.
    assert_eq!(edges[&m("run/inner")], BTreeSet::from([m("a")]));
    let c = circle(&edges).expect("a and b use each other");
    assert_eq!(BTreeSet::from_iter(c), BTreeSet::from([m("a"), m("b")]));
}
