//! Reading a postgresql.conf and the files it includes, as guc-file.l does.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::names::suggest;
use super::parse::{is_c_space, quote, scan_quoted};
use super::table::row_by_name;
use super::{SettingError, Settings};

impl Settings {
    /// Read a postgresql.conf, following its `include`, `include_if_exists`
    /// and `include_dir` lines as PostgreSQL does (guc-file.l's
    /// ParseConfigFp and ParseConfigDirectory): a relative path is relative
    /// to the directory of the file that names it; `include_if_exists`
    /// skips a missing file; `include_dir` reads the directory's files whose
    /// names end in `.conf` and do not start with `.`, in name order; files
    /// nest at most 10 deep (CONF_FILE_MAX_DEPTH), and a file that includes
    /// itself, directly or not, is refused. Returns the names present that
    /// pgiosim does not model (once each, as first written); the caller
    /// prints one notice line listing them. Errors name the file and line.
    ///
    /// As in PostgreSQL, when a setting appears more than once (in any of the
    /// files) only its last line counts (earlier values are not even
    /// checked), and nothing is applied unless every file is good. Unlike
    /// PostgreSQL, a name that is not a PostgreSQL setting is reported with
    /// the unmodelled ones (configuration files of other PostgreSQL versions
    /// stay readable), unless it looks like a typo of a modelled name, which
    /// is an error.
    pub fn apply_config_file(&mut self, path: &Path) -> anyhow::Result<Vec<String>> {
        let mut entries = Vec::new();
        let mut budget = CONF_TREE_MAX_BYTES;
        read_config_tree(path, 0, &mut Vec::new(), &mut budget, &mut entries)?;

        // First every name: report the unmodelled ones, refuse likely typos.
        // Each name is looked at once (sets, not scans: a file may hold
        // millions of lines).
        let mut seen: HashSet<&str> = HashSet::new();
        let mut not_modelled: Vec<String> = Vec::new();
        for entry in &entries {
            let path = &entry.file;
            if !seen.insert(entry.lower.as_str()) || row_by_name(&entry.lower).is_some() {
                // seen before, or applied below
            } else if let Some(suggestion) = (!entry.lower.contains('.'))
                .then(|| suggest(&entry.lower))
                .flatten()
            {
                anyhow::bail!(
                    "{}:{}: {}",
                    path.display(),
                    entry.line_no,
                    SettingError::Unknown {
                        name: entry.name.clone(),
                        suggestion: Some(suggestion),
                    }
                );
            } else {
                not_modelled.push(entry.name.clone());
            }
        }

        // Then the modelled settings, each from its last line only.
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (index, entry) in entries.iter().enumerate() {
            last.insert(entry.lower.as_str(), index);
        }
        let mut updated = self.clone();
        for (index, entry) in entries.iter().enumerate() {
            let Some(row) = row_by_name(&entry.lower) else {
                continue;
            };
            if last[entry.lower.as_str()] != index {
                continue;
            }
            updated.set_text(row, &entry.value).map_err(|err| {
                anyhow::anyhow!("{}:{}: {err}", entry.file.display(), entry.line_no)
            })?;
        }
        *self = updated;
        Ok(not_modelled)
    }
}

pub(super) const INCLUDE_DIRECTIVES: [&str; 3] = ["include", "include_dir", "include_if_exists"];

/// How deep configuration files may nest (PostgreSQL's CONF_FILE_MAX_DEPTH).
pub(super) const CONF_FILE_MAX_DEPTH: usize = 10;

/// How many bytes a configuration file and every file it includes may hold
/// in all, each file counted each time it is read: one file's bound, so that
/// a file included many times (or through many directories) cannot make
/// pgiosim read and hold gigabytes.
pub(super) const CONF_TREE_MAX_BYTES: u64 = crate::input::SMALL_FILE_MAX_BYTES;

pub(super) struct ConfigEntry {
    pub(super) name: String,
    pub(super) lower: String,
    /// Unquoted.
    pub(super) value: String,
    /// The file the line is in (for errors).
    pub(super) file: Rc<Path>,
    pub(super) line_no: usize,
}

/// Appends the settings of `path` and of the files it includes, in the order
/// PostgreSQL reads them. `stack` holds the files being read, outermost
/// first, to refuse a cycle; `budget` the bytes the tree may still read
/// (of [`CONF_TREE_MAX_BYTES`]).
pub(super) fn read_config_tree(
    path: &Path,
    depth: usize,
    stack: &mut Vec<PathBuf>,
    budget: &mut u64,
    entries: &mut Vec<ConfigEntry>,
) -> anyhow::Result<()> {
    let (canonical, bytes) = read_included(path, depth, stack, budget)?;
    let text = String::from_utf8_lossy(&bytes);
    let file: Rc<Path> = Rc::from(path);
    let base = path.parent().unwrap_or(Path::new("."));
    stack.push(canonical);
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let at = || format!("{}:{line_no}", path.display());
        let (name, value) = match parse_config_line(line) {
            Ok(None) => continue,
            Ok(Some(pair)) => pair,
            Err(message) => anyhow::bail!("{}: {message}", at()),
        };
        let lower = name.to_ascii_lowercase();
        if !INCLUDE_DIRECTIVES.contains(&lower.as_str()) {
            entries.push(ConfigEntry {
                lower,
                name,
                value,
                file: Rc::clone(&file),
                line_no,
            });
            continue;
        }
        if value.is_empty() {
            anyhow::bail!("{}: {lower} needs a file name", at());
        }
        let target = base.join(&value);
        match lower.as_str() {
            "include_if_exists" if !target.exists() => {}
            "include" | "include_if_exists" => {
                if !target.exists() {
                    anyhow::bail!("{}: include {}: no such file", at(), quote(&value));
                }
                read_config_tree(&target, depth + 1, stack, budget, entries)
                    .map_err(|e| e.context(format!("included from {}", at())))?;
            }
            _ => {
                let files = conf_dir_files(&target, &value, &at())?;
                for f in files {
                    read_config_tree(&f, depth + 1, stack, budget, entries)
                        .map_err(|e| e.context(format!("included from {}", at())))?;
                }
            }
        }
    }
    stack.pop();
    Ok(())
}

/// The canonical path and the bytes of the configuration file `path`, read
/// at nesting `depth` beneath the files of `stack`, within the `budget` the
/// tree may still read (taken from it); refuses too deep a nesting and an
/// include cycle, as PostgreSQL does.
fn read_included(
    path: &Path,
    depth: usize,
    stack: &[PathBuf],
    budget: &mut u64,
) -> anyhow::Result<(PathBuf, Vec<u8>)> {
    if depth > CONF_FILE_MAX_DEPTH {
        anyhow::bail!(
            "could not open configuration file \"{}\": maximum nesting depth exceeded \
             (configuration files nest more than {CONF_FILE_MAX_DEPTH} deep; PostgreSQL stops \
             there too)",
            path.display()
        );
    }
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(first) = stack.iter().position(|p| *p == canonical) {
        let chain: Vec<String> = stack[first..]
            .iter()
            .chain(std::iter::once(&canonical))
            .map(|p| p.display().to_string())
            .collect();
        anyhow::bail!("include cycle: {}", chain.join(" includes "));
    }
    let bytes = crate::input::read_bytes(
        path,
        "configuration file",
        crate::input::SMALL_FILE_MAX_BYTES,
    )?;
    if bytes.len() as u64 > *budget {
        anyhow::bail!(
            "configuration file {}: the files of --config hold more than the {} MiB pgiosim \
             reads in all (each included file counted each time it is included)",
            path.display(),
            CONF_TREE_MAX_BYTES >> 20
        );
    }
    *budget -= bytes.len() as u64;
    Ok((canonical, bytes))
}

/// The files `include_dir` `value` (the directory `target`, named at `at`)
/// includes, in the order PostgreSQL reads them.
fn conf_dir_files(target: &Path, value: &str, at: &str) -> anyhow::Result<Vec<PathBuf>> {
    let listing = std::fs::read_dir(target).map_err(|e| {
        anyhow::anyhow!(
            "{at}: include_dir {}: cannot read directory {}: {e}",
            quote(value),
            target.display()
        )
    })?;
    let mut files = Vec::new();
    for item in listing {
        let item =
            item.map_err(|e| anyhow::anyhow!("{at}: cannot list {}: {e}", target.display()))?;
        let name = item.file_name();
        let name = name.to_string_lossy();
        // As ParseConfigDirectory: .conf files only, no hidden
        // ones, no subdirectories.
        if name.starts_with('.') || !name.ends_with(".conf") {
            continue;
        }
        if std::fs::metadata(item.path()).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        files.push(item.path());
    }
    // strcmp order: bytes, as PostgreSQL sorts them.
    files.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    Ok(files)
}

/// One line of a postgresql.conf (guc-file.l): `name [=] value [# comment]`.
/// Returns `None` for a blank or comment line, or an error message.
pub(super) fn parse_config_line(line: &str) -> Result<Option<(String, String)>, String> {
    let rest = line.trim_start_matches(is_c_space);
    if rest.is_empty() || rest.starts_with('#') {
        return Ok(None);
    }
    let name_len = config_name_len(rest);
    if name_len == 0 {
        return Err(syntax_error(rest));
    }
    let name = &rest[..name_len];
    let mut rest = rest[name_len..].trim_start_matches(is_c_space);
    if let Some(after) = rest.strip_prefix('=') {
        rest = after.trim_start_matches(is_c_space);
    }
    let (value, after) = if rest.starts_with('\'') {
        let (text, len) = scan_quoted(rest)
            .ok_or_else(|| format!("unterminated quoted string in the value of {name}"))?;
        (text, &rest[len..])
    } else {
        let len = rest
            .find(|c: char| is_c_space(c) || c == '#' || c == '\'')
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(format!("missing value for {name}"));
        }
        (rest[..len].to_string(), &rest[len..])
    };
    let after = after.trim_start_matches(is_c_space);
    if !after.is_empty() && !after.starts_with('#') {
        return Err(format!(
            "{} (a value with spaces must be quoted, e.g. {name} = '...')",
            syntax_error(after)
        ));
    }
    Ok(Some((name.to_string(), value)))
}

/// Length of a setting name at the start of `s`: an identifier, optionally
/// `.identifier` (an extension's setting). Non-ASCII counts as a letter.
pub(super) fn config_name_len(s: &str) -> usize {
    fn ident_len(s: &str) -> usize {
        let mut chars = s.char_indices();
        match chars.next() {
            Some((_, c)) if c.is_ascii_alphabetic() || c == '_' || !c.is_ascii() => {}
            _ => return 0,
        }
        chars
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()))
            .map_or(s.len(), |(i, _)| i)
    }
    let first = ident_len(s);
    if first > 0 && s[first..].starts_with('.') {
        let second = ident_len(&s[first + 1..]);
        if second > 0 {
            return first + 1 + second;
        }
    }
    first
}

pub(super) fn syntax_error(near: &str) -> String {
    let token: String = near
        .chars()
        .take_while(|c| !is_c_space(*c))
        .take(40)
        .collect();
    format!("syntax error near \"{token}\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::replication::SynchronousCommit;
    use crate::settings::Settings;
    use crate::settings::test_support::*;
    use crate::settings::unit::*;

    // --- postgresql.conf ------------------------------------------------------

    #[test]
    fn config_file_with_comments_quotes_and_overrides() {
        let file = write_conf(
            "# PostgreSQL configuration file\n\
             \n\
             shared_buffers = 4GB\t\t# min 128kB\n\
             \t  # an indented comment\n\
             wal_buffers 16MB\n\
             checkpoint_timeout='15min'   # quoted\n\
             max_wal_size = '8GB'\n\
             synchronous_commit = off\n\
             commit_delay = 10\n\
             work_mem = 64MB\n\
             listen_addresses = '*'          # what IP address(es) to listen on\n\
             log_line_prefix = '%m [%p] # not a comment '' still quoted'\n\
             Max_Connections = 200\n\
             shared_preload_libraries = 'pg_stat_statements'\n\
             pg_stat_statements.max = 10000\n\
             shared_buffers = 8GB            # later lines win\n\
             #shared_buffers = 16GB\n\
             COMMIT_DELAY = 20\n\
             work_mem = 128MB\n",
        );
        let mut settings = Settings::default();
        let not_modelled = settings.apply_config_file(file.path()).unwrap();
        assert_eq!(settings.shared_buffers_bytes, 8 * GB);
        assert_eq!(settings.wal_buffers_bytes, Some(16 * MB));
        assert_eq!(settings.checkpoint_timeout_s, 900);
        assert_eq!(settings.max_wal_size_bytes, 8 * GB);
        assert_eq!(settings.synchronous_commit, SynchronousCommit::Off);
        assert_eq!(settings.commit_delay_us, 20);
        assert_eq!(
            not_modelled,
            [
                "work_mem",
                "listen_addresses",
                "log_line_prefix",
                "Max_Connections",
                "shared_preload_libraries",
                "pg_stat_statements.max",
            ]
        );
    }

    #[test]
    fn config_file_keeps_what_it_does_not_set() {
        let file = write_conf("checkpoint_completion_target = 0.5\n");
        let mut settings = with("shared_buffers", "2GB");
        assert!(settings.apply_config_file(file.path()).unwrap().is_empty());
        assert_eq!(settings.shared_buffers_bytes, 2 * GB);
        assert_eq!(settings.checkpoint_completion_target, 0.5);
    }

    #[test]
    fn config_file_includes_are_followed_as_postgresql_does() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("conf.d")).unwrap();
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(
            d.join("postgresql.conf"),
            "shared_buffers = 1GB\n\
             include 'sub/a.conf'\n\
             include_if_exists 'missing.conf'\n\
             INCLUDE_DIR = 'conf.d'\n\
             fsync = off\n",
        )
        .unwrap();
        // Relative to the including file's directory (sub/), not the cwd.
        std::fs::write(
            d.join("sub/a.conf"),
            "include 'b.conf'\ncommit_delay = 10\n",
        )
        .unwrap();
        std::fs::write(d.join("sub/b.conf"), "max_wal_size = 2GB\n").unwrap();
        // Name order; hidden files and other suffixes skipped.
        std::fs::write(d.join("conf.d/20-late.conf"), "shared_buffers = 4GB\n").unwrap();
        std::fs::write(
            d.join("conf.d/10-early.conf"),
            "shared_buffers = 2GB\nwork_mem = 4MB\n",
        )
        .unwrap();
        std::fs::write(d.join("conf.d/.hidden.conf"), "shared_buffers = 8GB\n").unwrap();
        std::fs::write(d.join("conf.d/99-other.txt"), "shared_buffers = 16GB\n").unwrap();
        let mut settings = Settings::default();
        let reported = settings
            .apply_config_file(&d.join("postgresql.conf"))
            .unwrap();
        assert_eq!(settings.shared_buffers_bytes, 4 << 30);
        assert_eq!(settings.commit_delay_us, 10);
        assert_eq!(settings.max_wal_size_bytes, 2 << 30);
        assert_eq!(reported, ["work_mem", "fsync"]);
    }

    #[test]
    fn config_file_include_errors_cycles_and_depth() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let conf = d.join("main.conf");
        let apply = |path: &Path| {
            let mut settings = Settings::default();
            settings
                .apply_config_file(path)
                .map(|_| settings)
                .map_err(|e| format!("{e:#}"))
        };

        std::fs::write(&conf, "include 'nope.conf'\n").unwrap();
        let e = apply(&conf).unwrap_err();
        assert!(
            e.contains("main.conf:1") && e.contains("no such file"),
            "{e}"
        );

        std::fs::write(&conf, "include_dir 'nodir'\n").unwrap();
        let e = apply(&conf).unwrap_err();
        assert!(e.contains("cannot read directory"), "{e}");

        // A bad value in an included file names that file and its line.
        std::fs::write(d.join("bad.conf"), "\nshared_buffers = lots\n").unwrap();
        std::fs::write(&conf, "include 'bad.conf'\n").unwrap();
        let e = apply(&conf).unwrap_err();
        assert!(e.contains("bad.conf:2"), "{e}");

        std::fs::write(&conf, "include 'loop.conf'\n").unwrap();
        std::fs::write(d.join("loop.conf"), "include 'main.conf'\n").unwrap();
        let e = apply(&conf).unwrap_err();
        assert!(e.contains("include cycle"), "{e}");

        // Eleven files deep (no cycle): PostgreSQL stops at 10.
        for i in 0..12 {
            std::fs::write(
                d.join(format!("n{i}.conf")),
                format!("include 'n{}.conf'\n", i + 1),
            )
            .unwrap();
        }
        std::fs::write(d.join("n12.conf"), "commit_delay = 5\n").unwrap();
        let e = apply(&d.join("n0.conf")).unwrap_err();
        assert!(e.contains("nest more than 10 deep"), "{e}");
        assert!(
            e.contains("n11.conf\": maximum nesting depth exceeded"),
            "{e}"
        );
        assert_eq!(apply(&d.join("n3.conf")).unwrap().commit_delay_us, 5);
    }

    #[test]
    fn config_file_tree_reads_at_most_one_budget_in_all() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("conf.d")).unwrap();
        let apply = |path: &Path| {
            let mut settings = Settings::default();
            settings
                .apply_config_file(path)
                .map(|_| settings)
                .map_err(|e| format!("{e:#}"))
        };
        // 3 MiB of comments: each file is well under the bound of one file.
        let mut big =
            "# padding padding padding padding padding padding padding\n".repeat((3 << 20) / 58);
        big.push_str("commit_delay = 7\n");
        std::fs::write(d.join("big.inc"), &big).unwrap();
        std::fs::write(
            d.join("conf.d/a.conf"),
            "include '../big.inc'\ninclude '../big.inc'\n",
        )
        .unwrap();
        std::fs::write(d.join("conf.d/b.conf"), "include '../big.inc'\n").unwrap();
        std::fs::write(d.join("main.conf"), "include_dir 'conf.d'\n").unwrap();
        // Three reads of it, 9 MiB: within the budget.
        assert_eq!(apply(&d.join("main.conf")).unwrap().commit_delay_us, 7);
        // Six reads, 18 MiB: refused at the read past the budget, naming the
        // file, the including line and the budget.
        std::fs::write(d.join("conf.d/b.conf"), "include '../big.inc'\n".repeat(4)).unwrap();
        let e = apply(&d.join("main.conf")).unwrap_err();
        assert!(e.contains("big.inc"), "{e}");
        assert!(e.contains("b.conf:4"), "{e}");
        assert!(
            e.contains("more than the 16 MiB pgiosim reads in all"),
            "{e}"
        );
    }

    #[test]
    fn config_file_bad_value_names_file_and_line() {
        let file = write_conf(
            "# comment\n\
             shared_buffers = 1GB\n\
             checkpoint_timeout = 5 min\n",
        );
        let mut settings = Settings::default();
        let message = settings
            .apply_config_file(file.path())
            .unwrap_err()
            .to_string();
        let location = format!("{}:3: ", file.path().display());
        assert!(message.starts_with(&location), "{message}");
        assert!(message.contains("must be quoted"), "{message}");
        assert_eq!(settings, Settings::default(), "nothing applied");

        let file = write_conf("shared_buffers = 1GB\n\n\nwal_writer_delay = '20s'\n");
        let message = settings
            .apply_config_file(file.path())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            format!(
                "{}:4: wal_writer_delay = 20s is out of range; PostgreSQL accepts 1ms .. 10s",
                file.path().display()
            )
        );
        assert_eq!(settings, Settings::default(), "nothing applied");

        let file = write_conf("synchronous_commit = perhaps\n");
        let message = settings
            .apply_config_file(file.path())
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with(&format!(
                "{}:1: invalid value for synchronous_commit: \"perhaps\"",
                file.path().display()
            )),
            "{message}"
        );
    }

    #[test]
    fn config_file_syntax_errors_name_file_and_line() {
        for (text, line) in [
            ("shared_buffers = 1GB\n= 5\n", 2),
            ("shared_buffers = 'unterminated\n", 1),
            ("shared_buffers =\n", 1),
            ("shared_buffers = 1GB\nwork_mem = 4 MB\n", 2),
            ("\n\n9lives = 1\n", 3),
        ] {
            let file = write_conf(text);
            let message = Settings::default()
                .apply_config_file(file.path())
                .unwrap_err()
                .to_string();
            let location = format!("{}:{line}: ", file.path().display());
            assert!(message.starts_with(&location), "{text:?}: {message}");
        }
    }

    #[test]
    fn config_file_overridden_lines_are_not_checked() {
        // As PostgreSQL: only the last assignment of a name is applied.
        let file = write_conf("shared_buffers = lots\nshared_buffers = 1GB\n");
        let mut settings = Settings::default();
        settings.apply_config_file(file.path()).unwrap();
        assert_eq!(settings.shared_buffers_bytes, GB);
    }

    #[test]
    fn config_file_typo_of_a_modelled_name_is_an_error() {
        let file = write_conf("shared_buffer = 16GB\n");
        let message = Settings::default()
            .apply_config_file(file.path())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            format!(
                "{}:1: unknown setting \"shared_buffer\"; did you mean shared_buffers?",
                file.path().display()
            )
        );
        // Names from other PostgreSQL versions, or unknown and far from any
        // modelled name, are only reported.
        let file = write_conf("wal_keep_segments = 64\nio_method = worker\nmy_custom = 1\n");
        assert_eq!(
            Settings::default().apply_config_file(file.path()).unwrap(),
            ["wal_keep_segments", "io_method", "my_custom"]
        );
    }

    #[test]
    fn config_file_that_cannot_be_read_is_named() {
        let message = Settings::default()
            .apply_config_file(Path::new("/nonexistent/postgresql.conf"))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("configuration file /nonexistent/postgresql.conf: cannot open: "),
            "{message}"
        );
    }

    #[test]
    fn config_line_parsing() {
        let line = |s: &str| parse_config_line(s).unwrap();
        let pair = |n: &str, v: &str| Some((n.to_string(), v.to_string()));
        assert_eq!(line(""), None);
        assert_eq!(line("   # comment"), None);
        assert_eq!(line("a = b"), pair("a", "b"));
        assert_eq!(line("a b"), pair("a", "b"));
        assert_eq!(line("a=b#c"), pair("a", "b"));
        assert_eq!(line("a = 'it''s'"), pair("a", "it's"));
        assert_eq!(line(r"a = 'it\'s\tx'"), pair("a", "it's\tx"));
        assert_eq!(line("a = '#1' # c"), pair("a", "#1"));
        assert_eq!(line("a = ''"), pair("a", ""));
        assert_eq!(line("ext.name = 1"), pair("ext.name", "1"));
        assert_eq!(line("a = 1.5GB"), pair("a", "1.5GB"));
        assert!(parse_config_line("a = 'x' y").is_err());
        assert!(parse_config_line("a = b c").is_err());
        assert!(parse_config_line("'a' = 1").is_err());
    }
}
