//! The errors every command shares and the exit-code rule: bad input (2),
//! a failure of the disk or server (1), an interruption (130). A leaf: it
//! depends on nothing else in the crate, so every layer can use it.

/// Bad input of any kind (a flag, a setting, a file the user named that
/// cannot be read or parsed): exit code 2, like clap's own errors.
#[derive(Debug)]
pub struct UsageError(pub String);

/// The exit codes, one rule for every command (`pgiosim --help` and the
/// README show it).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// A failure of the disk, the file system or the server (I/O error,
    /// disk full, connection lost): the input was good.
    pub const FAILURE: u8 = 1;
    /// Bad input: a flag, a setting, or a file the user named.
    pub const BAD_INPUT: u8 = 2;
    /// `compare --tolerance`: a result missed a target.
    pub const OUT_OF_TOLERANCE: u8 = 3;
    /// Interrupted by SIGINT or SIGTERM; a partial report may have been printed.
    pub const INTERRUPTED: u8 = 130;
}

/// The rule `--help` prints after the commands.
pub const EXIT_CODES_HELP: &str = "Exit codes: 0 success; 1 the disk, file system or server failed \
(I/O error, disk full, connection lost, the data set in use by another pgiosim), or a run \
completed no transaction; 2 bad input (a flag, a setting, or a file given such as --config, \
--workload, --device, results, an output path that cannot be written); 3 `compare --tolerance` \
found a figure out of tolerance; 130 interrupted by \
SIGINT or SIGTERM (a partial report is printed where there is one).";

/// Work stopped by SIGINT or SIGTERM before it was done: exit code 130.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// The exit code for an error: [`exit::BAD_INPUT`] if a [`UsageError`] is
/// anywhere in its chain, [`exit::INTERRUPTED`] for an [`Interrupted`], else
/// [`exit::FAILURE`].
pub fn exit_code(e: &anyhow::Error) -> u8 {
    for cause in e.chain() {
        if cause.downcast_ref::<Interrupted>().is_some() {
            return exit::INTERRUPTED;
        }
        if cause.downcast_ref::<UsageError>().is_some() {
            return exit::BAD_INPUT;
        }
    }
    exit::FAILURE
}

/// The name in `names` nearest to `typed` if it is at most two edits away
/// (and not `typed` itself), for "did you mean" hints.
pub fn nearest<'a>(typed: &str, names: &[&'a str]) -> Option<&'a str> {
    names
        .iter()
        .map(|n| (*n, strsim::levenshtein(typed, n)))
        .filter(|(_, d)| (1..=2).contains(d))
        .min_by_key(|(_, d)| *d)
        .map(|(n, _)| n)
}

/// `e`, marked as bad input (exit code 2) unless it is already one or an
/// interruption; for errors from reading and parsing a file the user named.
pub fn bad_input(e: anyhow::Error) -> anyhow::Error {
    if exit_code(&e) == exit::FAILURE {
        UsageError(format!("{e:#}")).into()
    } else {
        e
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A [`UsageError`] with `msg`, as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// Longest word of an error line before it is cut: a value or a path a
/// person can still read and recognise.
const WORD_CHARS_MAX: usize = 200;

/// Longest error line: its start (where) and end (what to do) are kept.
const LINE_CHARS_MAX: usize = 2000;

/// `msg` as the one line an error prints: a word longer than 200
/// characters is cut there with "…", and a line still longer than 2,000
/// keeps its first 1,200 and last 600 characters around " … ". Errors
/// repeat what the user gave, and a 1 MB value in --config made a 1 MB
/// line.
pub fn shorten(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(4 * LINE_CHARS_MAX));
    for (i, word) in msg.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match word.char_indices().nth(WORD_CHARS_MAX) {
            Some((cut, _)) => {
                out.push_str(&word[..cut]);
                out.push('…');
            }
            None => out.push_str(word),
        }
    }
    let n = out.chars().count();
    if n <= LINE_CHARS_MAX {
        return out;
    }
    let head: String = out.chars().take(1200).collect();
    let tail: String = out.chars().skip(n - 600).collect();
    format!("{head} … {tail}")
}

#[cfg(test)]
mod shorten_tests {
    use super::shorten;

    #[test]
    fn long_words_and_long_lines_are_cut_short_lines_are_not() {
        assert_eq!(shorten("a b  c"), "a b  c");
        let long = format!("x: \"{}\" is bad; fix it", "é".repeat(100_000));
        let s = shorten(&long);
        assert!(
            s.starts_with("x: \"éé") && s.ends_with("… is bad; fix it"),
            "{s}"
        );
        assert_eq!(s.chars().count(), 3 + 200 + 1 + " is bad; fix it".len());
        let many = format!("start {} end", "word ".repeat(100_000));
        let s = shorten(&many);
        assert!(
            s.starts_with("start word") && s.ends_with("word  end") && s.contains(" … "),
            "{s}"
        );
        assert!(s.chars().count() <= 2000 + 3);
    }
}
