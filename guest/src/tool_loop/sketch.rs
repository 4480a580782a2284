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
                text.push_str(&s[..floor(s, 2048)]);
                text.push('\u{1f}');
            }
        }
        Json::Num(n) => {
            ids.push_str(key);
            ids.push_str(&format!("={n}\u{1f}"));
        }
        Json::Arr(items) => items.iter().for_each(|i| walk(i, key, ids, text)),
        Json::Obj(members) => members.iter().for_each(|(k, v)| walk(v, k.as_str(), ids, text)),
        _ => {}
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
    fn other_entities_and_other_topics_are_other_aims() {
        let pay = |p: &str| {
            sk(&format!(r#"{{"flights":[{{"date":"2024-05-20","flight_number":"HAT069"}}],"payment_id":"{p}"}}"#))
        };
        assert!(!pay("certificate_7504069").similar(&pay("certificate_4856383")), "another payment method");
        assert!(pay("certificate_7504069").similar(&pay("certificate_7504069")));
        assert!(!sk(r#"{"query":"Milhaud"}"#).similar(&sk(r#"{"query":"Leonard Bernstein"}"#)));
    }
}
