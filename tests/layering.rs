//! The layers of src/, as docs/architecture.md writes them down: a module
//! may name (`crate::x`) only modules on a layer below its own. So the core
//! names no engine, command or command line, `device` no `instance`, and no
//! two top-level modules import each other. Test code (`#[cfg(test)]`
//! modules) may reach anywhere: it is not part of the layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The layers from the ```text block after "## Layers" in
/// docs/architecture.md, top first: each line's first column lists the
/// modules of one layer (separated by spaces), before two spaces or more
/// and what the layer is. Returns each module's layer, 0 at the bottom.
fn layers() -> BTreeMap<String, usize> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let section = doc
        .split_once("\n## Layers\n")
        .expect("docs/architecture.md has a \"## Layers\" section")
        .1;
    let block = section
        .split_once("```text\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("the layers in a ```text block")
        .0;
    let rows: Vec<Vec<String>> = block
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with(' '))
        .map(|l| {
            l.split("  ")
                .next()
                .unwrap()
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .collect();
    let mut layer_of = BTreeMap::new();
    for (i, row) in rows.iter().rev().enumerate() {
        for module in row {
            assert!(
                layer_of.insert(module.clone(), i).is_none(),
                "{module} is on two layers"
            );
        }
    }
    layer_of
}

/// The top-level modules of the library (lib.rs's `pub mod`s).
fn top_level_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

/// The files of modules declared `#[cfg(test)] mod name;` (and everything
/// under them): test code.
fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut test_dirs = Vec::new();
    let mut test_files = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.windows(2) {
            if pair[0].trim() != "#[cfg(test)]" {
                continue;
            }
            let decl = pair[1].trim();
            let Some(name) = decl
                .strip_prefix("mod ")
                .or_else(|| decl.strip_prefix("pub(crate) mod "))
                .or_else(|| decl.strip_prefix("pub mod "))
                .and_then(|rest| rest.strip_suffix(';'))
            else {
                continue;
            };
            // A mod.rs or lib.rs holds its children beside it; a.rs in a/.
            let stem = file.file_stem().unwrap().to_string_lossy();
            let dir = if stem == "mod" || stem == "lib" {
                file.parent().unwrap().to_path_buf()
            } else {
                file.with_extension("")
            };
            test_files.insert(dir.join(format!("{name}.rs")));
            test_dirs.push(dir.join(name));
        }
    }
    for file in files {
        if test_dirs.iter().any(|d| file.starts_with(d)) {
            test_files.insert(file.clone());
        }
    }
    test_files
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules `text` names as `crate::x`, with their line
/// numbers: code only, before an inline `#[cfg(test)]` module.
fn named_modules(text: &str) -> Vec<(usize, String)> {
    let mut named = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim();
        if trimmed == "#[cfg(test)]"
            && lines.peek().is_some_and(|(_, next)| {
                next.trim_start().starts_with("mod ") && next.ends_with('{')
            })
        {
            break;
        }
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if end > 0 && !rest[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                named.push((n + 1, after[..end].to_string()));
            }
            rest = &after[end..];
        }
    }
    named
}

#[test]
fn every_module_imports_only_layers_below_its_own() {
    let layer_of = layers();
    let modules = top_level_modules();
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !layer_of.contains_key(*m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules on no layer of docs/architecture.md: {unplaced:?}"
    );
    let stale: Vec<&String> = layer_of.keys().filter(|m| !modules.contains(*m)).collect();
    assert!(
        stale.is_empty(),
        "docs/architecture.md's layers name modules that are gone: {stale:?}"
    );

    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_only_files(&files);
    let mut breaches = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let owner = first.trim_end_matches(".rs");
        if tests.contains(file) || owner == "main" || owner == "lib" {
            continue;
        }
        let Some(&own) = layer_of.get(owner) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (line, named) in named_modules(&text) {
            if named == owner {
                continue;
            }
            if let Some(&theirs) = layer_of.get(&named)
                && theirs >= own
            {
                breaches.push(format!(
                    "src/{}:{line}: {owner} names crate::{named}, which is not below it",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        breaches.is_empty(),
        "imports against the layers of docs/architecture.md:\n{}",
        breaches.join("\n")
    );
}

/// Whether `text`'s code (before an inline `#[cfg(test)]` module, without
/// comments) names `parent::child`, directly or in a `parent::{...}` group.
fn names_path(text: &str, parent: &str, child: &str) -> bool {
    let mut code = String::new();
    for line in text.lines() {
        if line.trim() == "#[cfg(test)]" {
            break;
        }
        code.push_str(line.split("//").next().unwrap_or(""));
        code.push('\n');
    }
    let prefix = format!("{parent}::");
    code.match_indices(&prefix).any(|(at, _)| {
        let after = &code[at + prefix.len()..];
        let words = |s: &str| {
            s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        match after.strip_prefix('{') {
            Some(group) => words(&group[..group.find('}').unwrap_or(group.len())])
                .iter()
                .any(|w| w == child),
            None => words(after).first().is_some_and(|w| w == child),
        }
    })
}

/// A command's file checks its flags, calls the course in `execute` and
/// prints: it builds and drives no database itself, so it names neither
/// the database nor the driver.
#[test]
fn commands_drive_no_database_themselves() {
    let mut files = Vec::new();
    rust_files(&root().join("src/commands"), &mut files);
    let mut breaches = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (parent, child) in [("core", "database"), ("engine", "driver")] {
            if names_path(&text, parent, child) {
                breaches.push(format!(
                    "{}: names {parent}::{child}",
                    file.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        breaches.is_empty(),
        "commands reaching past execute:\n{}",
        breaches.join("\n")
    );
}

/// Inside `device`, the profile is the bottom: the model and its
/// microbenchmarks read profiles, so a profile that named them (for `Op`, or
/// for the QD1 read its summary line quotes) would close a circle.
#[test]
fn the_device_profile_names_neither_the_model_nor_its_microbenchmarks() {
    let text = std::fs::read_to_string(root().join("src/device/profile.rs")).unwrap();
    let named: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .filter(|l| l.contains("model::") || l.contains("microbench::"))
        .collect();
    assert!(
        named.is_empty(),
        "src/device/profile.rs names the model: {named:?}"
    );
}

#[test]
fn the_checks_see_what_they_should() {
    assert!(names_path(
        "use crate::core::database::Database;",
        "core",
        "database"
    ));
    assert!(names_path(
        "use crate::core::{config, database};",
        "core",
        "database"
    ));
    assert!(names_path(
        "use crate::engine::{\n    driver::drive,\n};",
        "engine",
        "driver"
    ));
    assert!(!names_path(
        "use crate::core::database_x;",
        "core",
        "database"
    ));
    assert!(!names_path(
        "// crate::core::database\n",
        "core",
        "database"
    ));
    assert!(!names_path(
        "use crate::engine::sim::SimDevice;",
        "engine",
        "driver"
    ));
    assert_eq!(
        named_modules(
            "use crate::core::io;\n// crate::cli\nlet x = crate::device::Profile::x(my_crate::y);\n"
        ),
        [(1, "core".to_string()), (3, "device".to_string())]
    );
    assert_eq!(
        named_modules("use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::cli;\n}\n"),
        [(1, "a".to_string())]
    );
    let layer_of = layers();
    assert!(layer_of["core"] < layer_of["engine"]);
    assert!(layer_of["device"] < layer_of["standby"]);
    assert!(!layer_of.contains_key("instance"));
}

/// The files of src/core/database/ that are a PostgreSQL process: each
/// keeps its own state and is reached only through the loop, never by
/// another process's file (docs/architecture.md, "The processes as
/// components").
const PROCESS_FILES: &[&str] = &[
    "autovacuum.rs",
    "backends.rs",
    "bgwriter_proc.rs",
    "checkpointer_proc.rs",
    "pgbench_threads.rs",
    "vacuum_worker.rs",
    "walwriter.rs",
];

/// The process files that are components: a struct handed the shared
/// memory it needs, with no `impl Database` of their own. The backends and
/// the vacuum worker still work on the database's fields directly.
const COMPONENT_FILES: &[&str] = &[
    "autovacuum.rs",
    "bgwriter_proc.rs",
    "checkpointer_proc.rs",
    "pgbench_threads.rs",
    "walwriter.rs",
];

/// The other files: the database's shared memory and its loop, which hands
/// events to the processes and applies what they answer.
const SHARED_FILES: &[&str] = &[
    "io_table.rs",
    "proc.rs",
    "wakeups.rs",
    "wal_flush.rs",
    "warmup.rs",
];

/// `text`'s code: comments and an inline `#[cfg(test)]` module dropped.
fn code_only(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod ") && next.ends_with('{'))
        {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// The identifiers in `code` right after `prefix` and followed by `(`.
fn called_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let after = &rest[at + prefix.len()..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if end > 0 && after[end..].starts_with('(') {
            out.insert(after[..end].to_string());
        }
        rest = &after[end..];
    }
    out
}

/// The functions `code` defines.
fn defined(code: &str) -> BTreeSet<String> {
    code.split("fn ")
        .skip(1)
        .filter_map(|s| {
            let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            (end > 0).then(|| s[..end].to_string())
        })
        .collect()
}

/// The calls in `files` (name → code) from one process file to a function
/// defined in another: a method call (`.f(`, `Self::f(`) whose name only
/// another process file defines, not the caller's own file, a shared file
/// or the rest of the core (a name such as `write` that a core type also
/// defines is not told apart; a process file's own function named as a
/// standard library method, such as `take`, would be seen as called).
fn cross_process_calls(
    files: &BTreeMap<String, String>,
    core_names: &BTreeSet<String>,
) -> Vec<String> {
    let defs: BTreeMap<&String, BTreeSet<String>> =
        files.iter().map(|(f, code)| (f, defined(code))).collect();
    let mut bad = Vec::new();
    for (file, code) in files {
        if !PROCESS_FILES.contains(&file.as_str()) {
            continue;
        }
        let calls: BTreeSet<String> = called_after(code, ".")
            .into_iter()
            .chain(called_after(code, "Self::"))
            .collect();
        for name in calls {
            let elsewhere = |f: &&String| *f != file && defs[f].contains(&name);
            let owners: Vec<&&String> = defs
                .keys()
                .filter(|f| PROCESS_FILES.contains(&f.as_str()) && elsewhere(f))
                .collect();
            let shared = defs
                .keys()
                .any(|f| !PROCESS_FILES.contains(&f.as_str()) && defs[f].contains(&name));
            if !owners.is_empty()
                && !defs[file].contains(&name)
                && !shared
                && !core_names.contains(&name)
            {
                bad.push(format!("{file} calls {name}, defined in {owners:?}"));
            }
        }
    }
    bad
}

/// The code of src/core/database.rs and the files of src/core/database/
/// (not the tests), by file name; and the functions the rest of the core
/// defines.
fn database_files() -> (BTreeMap<String, String>, BTreeSet<String>) {
    let core = root().join("src/core");
    let mut files = BTreeMap::new();
    let main = std::fs::read_to_string(core.join("database.rs")).unwrap();
    files.insert("database.rs".to_string(), code_only(&main));
    for entry in std::fs::read_dir(core.join("database")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_file() && name.ends_with(".rs") && name != "tests.rs" {
            files.insert(name, code_only(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    let mut core_names = BTreeSet::new();
    for entry in std::fs::read_dir(&core).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && path.file_name().is_some_and(|n| n != "database.rs") {
            core_names.extend(defined(&code_only(
                &std::fs::read_to_string(&path).unwrap(),
            )));
        }
    }
    (files, core_names)
}

#[test]
fn no_process_file_calls_into_another_process_file() {
    let (files, core_names) = database_files();
    for file in files.keys().filter(|f| *f != "database.rs") {
        assert!(
            PROCESS_FILES.contains(&file.as_str()) || SHARED_FILES.contains(&file.as_str()),
            "src/core/database/{file} is neither a process nor shared memory: \
             list it in tests/layering.rs and docs/architecture.md"
        );
    }
    let bad = cross_process_calls(&files, &core_names);
    assert!(
        bad.is_empty(),
        "processes call each other's files:\n{}",
        bad.join("\n")
    );
    for file in COMPONENT_FILES {
        assert!(
            !files[*file].contains("impl Database"),
            "{file} is a component: the loop hands it what it needs"
        );
    }
}

#[test]
fn the_cross_process_check_sees_a_call_into_another_process() {
    let (mut files, core_names) = database_files();
    // The vacuum worker's start, called from a backend: caught.
    let backends = files.get_mut("backends.rs").unwrap();
    backends.push_str("fn f(db: &mut Database) { db.start_vacuum(0, job); }\n");
    let bad = cross_process_calls(&files, &core_names);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].starts_with("backends.rs calls start_vacuum"),
        "{bad:?}"
    );
    // The same call from the loop is how events reach a process: allowed.
    let (mut files, _) = database_files();
    let wakeups = files.get_mut("wakeups.rs").unwrap();
    wakeups.push_str("fn f(db: &mut Database) { db.start_vacuum(0, job); }\n");
    assert!(cross_process_calls(&files, &core_names).is_empty());
}
