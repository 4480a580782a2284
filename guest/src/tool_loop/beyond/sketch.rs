//! A call's aim, in 40 bytes: which entities it names and what its free text says.
//!
//! Why: "the same result again" is a loop only when the agent keeps aiming at the same thing.
//! An agent that tries every payment method once, searches other dates, or looks up a different
//! person gets the same "not found" for a good reason (the rubric of tests/realdata calls it
//! exploration), while one that rephrases the same query or re-submits the same booking is
//! going round in circles. A sketch keeps (1) a hash of the identifier-like values of the
//! arguments (strings without spaces that contain a digit: ids, dates, flight numbers, file
//! names with versions), which must be equal, and (2) a 256-bit set of the character trigrams of
//! the rest of the text, which must overlap ([`Sketch::similar`]). Fixed size, so a session's
//! trail stays bounded.

use crate::digest::name_id;
use crate::json::Json;

/// The smallest trigram overlap (Jaccard, in percent) at which two free texts count as the same
/// aim, unless a detector's `aimOverlap` says otherwise.
pub const MIN_OVERLAP: u8 = 10;

/// The aim of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Sketch {
    /// Hash of the identifier-like argument values with their keys, in order.
    ids: u64,
    /// Character trigrams of the other string values (lower-cased), as a 256-bit set.
    grams: [u64; 4],
}

impl Sketch {
    /// The sketch of a call's arguments.
    pub fn of(args: &Json<'_>) -> Sketch {
        let mut ids = String::new();
        let mut text = String::new();
        walk(args, "", &mut ids, &mut text);
        let mut grams = [0u64; 4];
        let chars: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
        for w in chars.windows(3) {
            let h = name_id(&w.iter().collect::<String>());
            grams[(h >> 6) as usize % 4] |= 1 << (h & 63);
        }
        Sketch { ids: name_id(&ids), grams }
    }

    /// For tests: the aim of a call with arguments `n`: four trigrams every such call shares and
    /// four of its own, so two of them overlap by a third (same aim, not near-identical).
    #[cfg(test)]
    pub(crate) fn test_aim(n: u8) -> Sketch {
        let own = 4 + 4 * u64::from(n % 15);
        Sketch { ids: 0, grams: [0b1111 | (0b1111 << own), 0, 0, 0] }
    }

    /// Same entities, and free texts that overlap by at least [`MIN_OVERLAP`] (or both empty).
    pub fn similar(&self, other: &Sketch) -> bool {
        self.similar_at(other, MIN_OVERLAP)
    }

    /// Same entities, and free texts that overlap by at least `min_percent` (or both empty).
    pub fn similar_at(&self, other: &Sketch, min_percent: u8) -> bool {
        if self.ids != other.ids {
            return false;
        }
        let both: u32 = self.grams.iter().zip(&other.grams).map(|(a, b)| (a & b).count_ones()).sum();
        let either: u32 = self.grams.iter().zip(&other.grams).map(|(a, b)| (a | b).count_ones()).sum();
        either == 0 || both * 100 >= either * u32::from(min_percent)
    }
}

/// The aims of a streak, for chaining: a call belongs to the streak when it aims where the
/// current call or a call already in the streak does (a query rephrased a little at a time
/// drifts away from its first form). At most [`MAX_AIMS`] are kept.
#[derive(Debug, Clone)]
pub struct Aims(Vec<Sketch>, u8);

/// The most aims a streak keeps.
pub const MAX_AIMS: usize = 8;

impl Aims {
    /// The aims of a streak that starts with the current call's; texts must overlap by
    /// `min_percent`.
    pub fn new(current: &Sketch, min_percent: u8) -> Self {
        Aims(vec![*current], min_percent)
    }

    /// True when `s` aims where one of the streak's calls does.
    pub fn includes(&self, s: &Sketch) -> bool {
        self.0.iter().any(|a| a.similar_at(s, self.1))
    }

    /// Adds a call of the streak (beyond [`MAX_AIMS`], ignored).
    pub fn add(&mut self, s: Sketch) {
        if self.0.len() < MAX_AIMS && !self.0.contains(&s) {
            self.0.push(s);
        }
    }
}

/// Argument keys whose value is commentary for people, not part of what the call does: coding
/// agents' shell tools take a `description` of each command (Claude Code's Bash, Gemini CLI's
/// shell), and some tools a `thought` or an `explanation`. Two greps for different names with
/// "Search the code for …" beside them are different calls; the same poll described in other
/// words each time is the same call. Neither the fold ([`super::look::fold`]) nor the aim
/// ([`Sketch::of`]) reads them.
pub const COMMENTARY_KEYS: &[&str] = &["description", "explanation", "thought", "rationale"];

/// True for a key in [`COMMENTARY_KEYS`].
pub fn is_commentary(key: &str) -> bool {
    COMMENTARY_KEYS.contains(&key)
}

fn walk(v: &Json<'_>, key: &str, ids: &mut String, text: &mut String) {
    match v {
        Json::Str(s) => {
            let s = s.as_str();
            let id_like = s.len() <= 80 && !s.contains(char::is_whitespace) && s.contains(|c: char| c.is_ascii_digit());
            if id_like {
                // Keys too: the same id under another key is another entity.
                ids.push_str(key);
                ids.push('=');
                ids.push_str(s);
                ids.push('\u{1f}');
            } else {
                // Values only: the keys would make any two calls of one tool look alike.
                let s = &s[..floor(s, 2048)];
                text.push_str(s);
                text.push('\u{1f}');
                // The files a command or a text names are entities too: the same grep in
                // another file aims elsewhere.
                for token in s.split(|c: char| c.is_whitespace() || "\"'`=,;()[]{}<>|&".contains(c)) {
                    if is_path(token) {
                        ids.push_str(key);
                        ids.push('@');
                        ids.push_str(token.trim_end_matches(['.', ':', '/']));
                        ids.push('\u{1f}');
                    }
                }
            }
        }
        Json::Num(n) => {
            ids.push_str(key);
            ids.push_str(&format!("={n}\u{1f}"));
        }
        Json::Arr(items) => items.iter().for_each(|i| walk(i, key, ids, text)),
        // Commentary (a command's `description`) says nothing of what the call aims at.
        Json::Obj(members) => {
            members.iter().filter(|(k, _)| !is_commentary(k.as_str())).for_each(|(k, v)| walk(v, k.as_str(), ids, text))
        }
        _ => {}
    }
}

/// A file or folder: `/a/b`, `./x`, `src/app.py`, `reproduce.py` (a name with a short
/// extension that has a letter).
fn is_path(t: &str) -> bool {
    let t = t.trim_end_matches(['.', ':']);
    if t.len() < 4 || t.len() > 200 || t.starts_with("//") || t.contains("://") {
        return false;
    }
    if t.starts_with('/') || t.starts_with("./") || t.starts_with("~/") {
        return t.chars().any(char::is_alphanumeric);
    }
    let name = t.rsplit('/').next().unwrap_or(t);
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
                && name.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c))
        }
        None => false,
    }
}

/// The largest char boundary ≤ `n`.
fn floor(s: &str, n: usize) -> usize {
    let mut i = n.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(args: &str) -> Sketch {
        Sketch::of(&crate::input::json_value_with(args, "a", Default::default()).unwrap())
    }

    #[test]
    fn rephrasings_of_one_query_share_an_aim() {
        assert!(sk(r#"{"query":"2003-04 season contenders"}"#).similar(&sk(r#"{"query":"2003-04 season nominees"}"#)));
        assert!(sk(r#"{"query":"Scatman John"}"#).similar(&sk(r#"{"query":"\"Scatman John\""}"#)));
    }

    #[test]
    fn the_files_a_command_names_are_its_entities() {
        let grep = |f: &str| sk(&format!(r#"{{"command":"grep -n \"prepare_value\" /workspace/django/db/{f}"}}"#));
        assert!(!grep("fields/json.py").similar(&grep("fields/__init__.py")), "the same grep in another file");
        assert!(grep("fields/json.py").similar(&grep("fields/json.py")));
        let run = sk(r#"{"command":"cd /testbed && python reproduce.py"}"#);
        assert!(run.similar(&sk(r#"{"command":"cd /testbed && python  reproduce.py"}"#)));
        assert!(!is_path("a.b.c d") && !is_path("2.0") && !is_path("http://x.org/a") && is_path("src/app.py"));
    }

    #[test]
    fn a_shared_description_does_not_make_two_greps_aim_alike() {
        let grep = |n: &str| sk(&format!(r#"{{"command":"grep -rn {n} .","description":"Search the code for {n}"}}"#));
        assert!(!grep("parseConfig").similar_at(&grep("loadSettings"), 50));
    }

    #[test]
    fn other_entities_and_other_topics_are_other_aims() {
        let pay = |p: &str| {
            sk(&format!(r#"{{"flights":[{{"date":"2024-05-20","flight_number":"HAT069"}}],"payment_id":"{p}"}}"#))
        };
        assert!(!pay("certificate_7504069").similar(&pay("certificate_4856383")), "another payment method");
        assert!(pay("certificate_7504069").similar(&pay("certificate_7504069")));
        assert!(!sk(r#"{"query":"Milhaud"}"#).similar(&sk(r#"{"query":"Leonard Bernstein"}"#)));
    }
}
