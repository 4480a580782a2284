//! Reads the `fields` string of the packed WIT methods (`check-tool-call-packed`,
//! `record-tool-outcome-packed`, `check-bot-message-packed`, interface 0.3.0).
//!
//! Why packed methods exist: every string argument of a WIT call is a separate `cabi_realloc`
//! call from the host into the guest, a copy, and an allocation and a free on the guest's side.
//! For a bot message (six strings) that boundary work was about two thirds of a decision through
//! wasmtime. The packed methods take the strings concatenated into one `fields` string plus their
//! UTF-8 byte lengths as plain integers, so a call crosses with one string however many fields it
//! has.
//!
//! How: [`Fields`] hands out `&str` slices of `fields` in order, without copying. A length that
//! runs past the end of `fields` or ends inside a UTF-8 character is a [`PolicyError`] whose path
//! is the length parameter's WIT name (`session-len`), so a host that packs wrongly learns which
//! length is wrong instead of trapping the guest.
//!
//! ```
//! use loopguard_policy::packed::Fields;
//! let mut f = Fields::new("s1readé{}");
//! assert_eq!(f.take(2, "session-len").unwrap(), "s1");
//! assert_eq!(f.take_opt(None, "run-len").unwrap(), None);
//! assert_eq!(f.take(6, "tool-len").unwrap(), "readé");
//! assert_eq!(f.rest(), "{}");
//! assert_eq!(Fields::new("é").take(1, "tool-len").unwrap_err().path, "tool-len");
//! ```

use crate::error::PolicyError;

/// The not yet consumed tail of a packed `fields` string.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    /// What is left of `fields`.
    rest: &'a str,
    /// How many bytes of `fields` were taken before `rest` (for error messages).
    offset: usize,
}

impl<'a> Fields<'a> {
    /// Starts reading `fields` at its first byte.
    pub fn new(fields: &'a str) -> Self {
        Fields { rest: fields, offset: 0 }
    }

    /// The next `len` bytes as a field. `param` is the WIT name of the length parameter, used as
    /// the error's path.
    pub fn take(&mut self, len: u32, param: &'static str) -> Result<&'a str, PolicyError> {
        let n = usize::try_from(len).unwrap_or(usize::MAX);
        // `split_at_checked` checks the end and the character boundary in one step; the error is
        // built out of line, so the hot path stays a few instructions per field.
        match self.rest.split_at_checked(n) {
            Some((field, rest)) => {
                self.rest = rest;
                self.offset += n;
                Ok(field)
            }
            None => Err(self.take_error(len, param)),
        }
    }

    /// Why `len` cannot be taken: past the end, or inside a UTF-8 character.
    #[cold]
    #[inline(never)]
    fn take_error(&self, len: u32, param: &'static str) -> PolicyError {
        let n = usize::try_from(len).unwrap_or(usize::MAX);
        if n > self.rest.len() {
            PolicyError::new(
                param,
                format!(
                    "is {len} but only {} bytes of `fields` are left after byte {}; lengths are UTF-8 \
                     byte lengths of the fields in the documented order",
                    self.rest.len(),
                    self.offset
                ),
            )
        } else {
            PolicyError::new(
                param,
                format!(
                    "is {len}, which ends inside a UTF-8 character (byte {} of `fields`); pass UTF-8 \
                     byte lengths, not character counts",
                    self.offset + n
                ),
            )
        }
    }

    /// [`Fields::take`] for an optional field: `None` takes nothing and means the field is absent.
    pub fn take_opt(&mut self, len: Option<u32>, param: &'static str) -> Result<Option<&'a str>, PolicyError> {
        len.map(|len| self.take(len, param)).transpose()
    }

    /// Everything not taken yet: the last field, whose length is implied.
    pub fn rest(self) -> &'a str {
        self.rest
    }

    /// Checks that every byte of `fields` was taken (for layouts whose lengths are all given).
    pub fn finish(self) -> Result<(), PolicyError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(self.finish_error())
        }
    }

    #[cold]
    #[inline(never)]
    fn finish_error(self) -> PolicyError {
        PolicyError::new(
            "fields",
            format!(
                "has {} bytes after the last field (byte {} on); its length must be the sum of the \
                 length parameters",
                self.rest.len(),
                self.offset
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `fields` with the given lengths (`None` = an absent optional field) and returns the
    /// fields, the rest, or the error's path.
    fn read(fields: &str, lens: &[Option<u32>]) -> Result<(Vec<Option<String>>, String), String> {
        const PARAMS: [&str; 4] = ["a-len", "b-len", "c-len", "d-len"];
        let mut f = Fields::new(fields);
        let mut out = Vec::new();
        for (len, param) in lens.iter().zip(PARAMS) {
            out.push(f.take_opt(*len, param).map_err(|e| e.path)?.map(str::to_string));
        }
        Ok((out, f.rest().to_string()))
    }

    fn some(parts: &[&str]) -> Vec<Option<String>> {
        parts.iter().map(|p| Some(p.to_string())).collect()
    }

    #[test]
    fn fields_are_cut_at_the_given_byte_lengths() {
        assert_eq!(read("abcdef", &[Some(1), Some(2)]), Ok((some(&["a", "bc"]), "def".into())));
        assert_eq!(read("abc", &[Some(3)]), Ok((some(&["abc"]), String::new())));
        assert_eq!(read("", &[Some(0), Some(0)]), Ok((some(&["", ""]), String::new())));
    }

    #[test]
    fn absent_optional_fields_take_no_bytes() {
        assert_eq!(
            read("ab", &[Some(1), None, Some(1)]),
            Ok((vec![Some("a".into()), None, Some("b".into())], "".into()))
        );
    }

    #[test]
    fn lengths_count_utf8_bytes_not_characters() {
        // "é" is 2 bytes, "😀" is 4.
        assert_eq!(read("é😀x", &[Some(2), Some(4)]), Ok((some(&["é", "😀"]), "x".into())));
    }

    #[test]
    fn a_length_past_the_end_names_its_parameter() {
        assert_eq!(read("abc", &[Some(4)]), Err("a-len".into()));
        assert_eq!(read("abc", &[Some(2), Some(2)]), Err("b-len".into()));
        assert_eq!(read("abc", &[Some(1), None, Some(u32::MAX)]), Err("c-len".into()));
    }

    #[test]
    fn a_length_inside_a_utf8_character_names_its_parameter() {
        assert_eq!(read("é", &[Some(1)]), Err("a-len".into()));
        assert_eq!(read("a😀", &[Some(1), Some(3)]), Err("b-len".into()));
    }

    #[test]
    fn error_messages_say_what_is_wrong_and_where() {
        let e = Fields::new("abc").take(5, "session-len").unwrap_err();
        assert_eq!(e.path, "session-len");
        assert!(e.reason.contains("is 5 but only 3 bytes of `fields` are left after byte 0"), "{}", e.reason);
        let mut f = Fields::new("aé");
        f.take(1, "tool-len").unwrap();
        let e = f.take(1, "run-len").unwrap_err();
        assert!(e.reason.contains("ends inside a UTF-8 character (byte 2 of `fields`)"), "{}", e.reason);
    }

    #[test]
    fn finish_refuses_bytes_after_the_last_field() {
        let mut f = Fields::new("abc");
        f.take(3, "a-len").unwrap();
        assert_eq!(f.finish(), Ok(()));
        let mut f = Fields::new("abcd");
        f.take(3, "a-len").unwrap();
        let e = f.finish().unwrap_err();
        assert_eq!(e.path, "fields");
        assert!(e.reason.contains("has 1 bytes after the last field (byte 3 on)"), "{}", e.reason);
    }
}
