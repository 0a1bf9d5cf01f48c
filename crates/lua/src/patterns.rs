//! Lua 5.4's pattern matching (`string.find`, `string.match`, `string.gmatch`, `string.gsub`),
//! ported to Rust so that a runaway pattern can be stopped.
//!
//! Why a port: C Lua's matcher (`lstrlib.c`) backtracks inside one C call, never returning to the
//! VM, so neither the instruction hook nor a wall-clock check can interrupt it:
//! `string.find(("a"):rep(40), ("a-"):rep(30) .. "b")` runs for longer than the universe. mlua
//! offers no way in either (its hooks and memory limit act only at VM instructions and
//! allocations, and the matcher allocates nothing), and running the call on a thread that is
//! abandoned would leave a core spinning for good. The `lua-patterns` crate is a port of Lua 5.2
//! without a way to bound its work. So this is a line-by-line port of Lua 5.4.9's matcher (same
//! semantics, same error messages) whose every step is charged to the hook call's instruction
//! budget and whose deadline is checked as it goes ([`super::state::charge`]): a pathological
//! pattern fails deterministically with the instruction-limit error, at the caller's `file:line`.
//! The plain (`find(s, p, i, true)`) search uses `memchr::memmem`, linear where C's is not.
//!
//! Lua is © 1994–2026 Lua.org, PUC-Rio, under the MIT licence; the port keeps it: see
//! `patterns/LICENSE-lua.txt` and `patterns/PROVENANCE.md`.
//!
//! Subject and pattern are byte strings, as in Lua. Reading one past the end yields `0`, as C's
//! terminating NUL does, so edge cases (`%f` at the end, `%b` against the end) behave alike.

use mlua::{Lua, MultiValue, Value};

use super::state;

/// Maximum recursion depth of the matcher (Lua's `MAXCCALLS`).
const MAXCCALLS: usize = 200;
/// Maximum captures per pattern (Lua's `LUA_MAXCAPTURES`).
const MAXCAPTURES: usize = 32;
const CAP_UNFINISHED: isize = -1;
const CAP_POSITION: isize = -2;
const L_ESC: u8 = b'%';
const SPECIALS: &[u8] = b"^$*+?.([%-";
/// Matcher steps between two charges to the budget (and deadline checks).
const METER_STEP: u32 = 1024;

type R<T> = mlua::Result<T>;

fn err<T>(message: impl Into<String>) -> R<T> {
    Err(mlua::Error::external(PatternError(message.into())))
}

/// Replaces the pattern functions of the `string` table (which is also the string metatable's
/// `__index`, so `s:find(...)` is covered too).
///
/// The Rust functions return `true, results...` or `false, message`, and a thin Lua wrapper raises
/// the message with `error(message, 0)`: an error raised from Rust would reach a script's `pcall`
/// as a userdata, where Lua's own functions raise strings.
pub(super) fn install(lua: &Lua) -> R<()> {
    let impls = lua.create_table()?;
    impls.set(
        "find",
        lua.create_function(|lua, args: MultiValue| protect(lua, find_aux(lua, &args, true)))?,
    )?;
    impls.set(
        "match",
        lua.create_function(|lua, args: MultiValue| protect(lua, find_aux(lua, &args, false)))?,
    )?;
    impls.set(
        "gmatch",
        lua.create_function(|lua, args: MultiValue| {
            let iterator =
                gmatch(lua, args).map(|f| MultiValue::from_vec(vec![Value::Function(f)]));
            protect(lua, iterator)
        })?,
    )?;
    impls.set(
        "gsub",
        lua.create_function(|lua, args: MultiValue| {
            protect(
                lua,
                gsub(lua, args).map(|(v, n)| MultiValue::from_vec(vec![v, Value::Integer(n)])),
            )
        })?,
    )?;
    lua.load(
        r#"
        local impls, error = ...
        local function check(ok, ...)
          if ok then return ... end
          error((...), 0)
        end
        local find, match, gsub, gmatch = impls.find, impls.match, impls.gsub, impls.gmatch
        string.find = function(...) return check(find(...)) end
        string.match = function(...) return check(match(...)) end
        string.gsub = function(...) return check(gsub(...)) end
        string.gmatch = function(...)
          local next_match = check(gmatch(...))
          return function() return check(next_match()) end
        end
        "#,
    )
    .set_name(state::GLUE_CHUNK)
    .call::<()>((impls, lua.globals().get::<mlua::Function>("error")?))?;
    Ok(())
}

/// A pattern or argument error of ours, raised at the caller's line.
#[derive(Debug)]
struct PatternError(String);

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PatternError {}

/// `true, results...` or `false, message` (see [`install`]).
fn protect(lua: &Lua, result: R<MultiValue>) -> R<MultiValue> {
    match result {
        Ok(mut values) => {
            values.push_front(Value::Boolean(true));
            Ok(values)
        }
        Err(e) => {
            let message = match &e {
                mlua::Error::ExternalError(inner) => match state::caller_location(lua) {
                    Some(at) => format!("{at}: {inner}"),
                    None => inner.to_string(),
                },
                other => lua_message(other),
            };
            Ok(MultiValue::from_vec(vec![
                Value::Boolean(false),
                Value::String(lua.create_string(message)?),
            ]))
        }
    }
}

/// The message of an error raised by Lua code we called (a `gsub` replacement function), without
/// mlua's traceback.
fn lua_message(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::CallbackError { cause, .. } => return lua_message(cause),
        mlua::Error::RuntimeError(m) => m.clone(),
        other => other.to_string(),
    };
    match text.find("\nstack traceback:") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Counts matcher steps and charges them to the current hook call.
struct Meter<'l> {
    lua: &'l Lua,
    steps: u32,
}

impl Meter<'_> {
    fn tick(&mut self, n: u32) -> R<()> {
        self.steps += n;
        if self.steps >= METER_STEP {
            let steps = std::mem::take(&mut self.steps);
            state::charge(self.lua, i64::from(steps))?;
        }
        Ok(())
    }
}

/// A capture as found: a piece of the subject or a position (`()`).
enum Capture {
    Text(usize, usize),
    Position(usize),
}

struct MatchState<'a, 'l> {
    src: &'a [u8],
    pat: &'a [u8],
    matchdepth: usize,
    level: usize,
    capture: [(usize, isize); MAXCAPTURES],
    meter: &'a mut Meter<'l>,
}

impl<'a, 'l> MatchState<'a, 'l> {
    fn new(src: &'a [u8], pat: &'a [u8], meter: &'a mut Meter<'l>) -> Self {
        MatchState {
            src,
            pat,
            matchdepth: MAXCCALLS,
            level: 0,
            capture: [(0, 0); MAXCAPTURES],
            meter,
        }
    }

    fn reprep(&mut self) {
        self.matchdepth = MAXCCALLS;
        self.level = 0;
    }

    fn p(&self, i: usize) -> u8 {
        self.pat.get(i).copied().unwrap_or(0)
    }

    fn s(&self, i: usize) -> u8 {
        self.src.get(i).copied().unwrap_or(0)
    }

    fn check_capture(&self, l: u8) -> R<usize> {
        let l = isize::from(l) - isize::from(b'1');
        if l < 0 || l as usize >= self.level || self.capture[l as usize].1 == CAP_UNFINISHED {
            return err(format!("invalid capture index %{}", l + 1));
        }
        Ok(l as usize)
    }

    fn capture_to_close(&self) -> R<usize> {
        (0..self.level)
            .rev()
            .find(|&l| self.capture[l].1 == CAP_UNFINISHED)
            .map_or_else(|| err("invalid pattern capture"), Ok)
    }

    fn classend(&self, mut p: usize) -> R<usize> {
        let c = self.p(p);
        p += 1;
        match c {
            L_ESC => {
                if p >= self.pat.len() {
                    return err("malformed pattern (ends with '%')");
                }
                Ok(p + 1)
            }
            b'[' => {
                if self.p(p) == b'^' {
                    p += 1;
                }
                loop {
                    if p >= self.pat.len() {
                        return err("malformed pattern (missing ']')");
                    }
                    let c = self.p(p);
                    p += 1;
                    if c == L_ESC && p < self.pat.len() {
                        p += 1;
                    }
                    if self.p(p) == b']' {
                        break;
                    }
                }
                Ok(p + 1)
            }
            _ => Ok(p),
        }
    }

    /// `p` at the `[`, `ec` at the closing `]`.
    fn matchbracketclass(&self, c: u8, mut p: usize, ec: usize) -> bool {
        let mut sig = true;
        if self.p(p + 1) == b'^' {
            sig = false;
            p += 1;
        }
        loop {
            p += 1;
            if p >= ec {
                break;
            }
            if self.p(p) == L_ESC {
                p += 1;
                if match_class(c, self.p(p)) {
                    return sig;
                }
            } else if self.p(p + 1) == b'-' && p + 2 < ec {
                p += 2;
                if self.p(p - 2) <= c && c <= self.p(p) {
                    return sig;
                }
            } else if self.p(p) == c {
                return sig;
            }
        }
        !sig
    }

    fn singlematch(&self, s: usize, p: usize, ep: usize) -> bool {
        if s >= self.src.len() {
            return false;
        }
        let c = self.src[s];
        match self.p(p) {
            b'.' => true,
            L_ESC => match_class(c, self.p(p + 1)),
            b'[' => self.matchbracketclass(c, p, ep - 1),
            other => other == c,
        }
    }

    fn matchbalance(&mut self, mut s: usize, p: usize) -> R<Option<usize>> {
        if p + 1 >= self.pat.len() {
            return err("malformed pattern (missing arguments to '%b')");
        }
        if self.s(s) != self.p(p) {
            return Ok(None);
        }
        let (b, e) = (self.p(p), self.p(p + 1));
        let mut cont = 1;
        loop {
            s += 1;
            if s >= self.src.len() {
                return Ok(None);
            }
            self.meter.tick(1)?;
            let c = self.src[s];
            if c == e {
                cont -= 1;
                if cont == 0 {
                    return Ok(Some(s + 1));
                }
            } else if c == b {
                cont += 1;
            }
        }
    }

    fn max_expand(&mut self, s: usize, p: usize, ep: usize) -> R<Option<usize>> {
        let mut i = 0;
        while self.singlematch(s + i, p, ep) {
            self.meter.tick(1)?;
            i += 1;
        }
        loop {
            if let Some(res) = self.do_match(s + i, ep + 1)? {
                return Ok(Some(res));
            }
            if i == 0 {
                return Ok(None);
            }
            i -= 1;
        }
    }

    fn min_expand(&mut self, mut s: usize, p: usize, ep: usize) -> R<Option<usize>> {
        loop {
            if let Some(res) = self.do_match(s, ep + 1)? {
                return Ok(Some(res));
            }
            if self.singlematch(s, p, ep) {
                s += 1;
            } else {
                return Ok(None);
            }
        }
    }

    fn start_capture(&mut self, s: usize, p: usize, what: isize) -> R<Option<usize>> {
        let level = self.level;
        if level >= MAXCAPTURES {
            return err("too many captures");
        }
        self.capture[level] = (s, what);
        self.level = level + 1;
        let res = self.do_match(s, p)?;
        if res.is_none() {
            self.level -= 1;
        }
        Ok(res)
    }

    fn end_capture(&mut self, s: usize, p: usize) -> R<Option<usize>> {
        let l = self.capture_to_close()?;
        self.capture[l].1 = (s - self.capture[l].0) as isize;
        let res = self.do_match(s, p)?;
        if res.is_none() {
            self.capture[l].1 = CAP_UNFINISHED;
        }
        Ok(res)
    }

    fn match_capture(&mut self, s: usize, l: u8) -> R<Option<usize>> {
        let l = self.check_capture(l)?;
        let (init, len) = self.capture[l];
        // A position capture has a negative length, which C's size_t makes huge: never equal.
        let Ok(len) = usize::try_from(len) else {
            return Ok(None);
        };
        self.meter.tick(1 + (len / 64) as u32)?;
        if self.src.len() - s >= len && self.src[init..init + len] == self.src[s..s + len] {
            Ok(Some(s + len))
        } else {
            Ok(None)
        }
    }

    fn do_match(&mut self, s: usize, p: usize) -> R<Option<usize>> {
        if self.matchdepth == 0 {
            return err("pattern too complex");
        }
        self.matchdepth -= 1;
        let res = self.match_here(s, p);
        self.matchdepth += 1;
        res
    }

    /// The body of C's `match`; its `goto init` tail calls are the loop.
    fn match_here(&mut self, mut s: usize, mut p: usize) -> R<Option<usize>> {
        loop {
            self.meter.tick(1)?;
            if p == self.pat.len() {
                return Ok(Some(s));
            }
            match self.p(p) {
                b'(' => {
                    return if self.p(p + 1) == b')' {
                        self.start_capture(s, p + 2, CAP_POSITION)
                    } else {
                        self.start_capture(s, p + 1, CAP_UNFINISHED)
                    };
                }
                b')' => return self.end_capture(s, p + 1),
                b'$' if p + 1 == self.pat.len() => {
                    return Ok((s == self.src.len()).then_some(s));
                }
                L_ESC if self.p(p + 1) == b'b' => match self.matchbalance(s, p + 2)? {
                    Some(next) => {
                        s = next;
                        p += 4;
                    }
                    None => return Ok(None),
                },
                L_ESC if self.p(p + 1) == b'f' => {
                    p += 2;
                    if self.p(p) != b'[' {
                        return err("missing '[' after '%f' in pattern");
                    }
                    let ep = self.classend(p)?;
                    let previous = if s == 0 { 0 } else { self.src[s - 1] };
                    if !self.matchbracketclass(previous, p, ep - 1)
                        && self.matchbracketclass(self.s(s), p, ep - 1)
                    {
                        p = ep;
                    } else {
                        return Ok(None);
                    }
                }
                L_ESC if self.p(p + 1).is_ascii_digit() => {
                    match self.match_capture(s, self.p(p + 1))? {
                        Some(next) => {
                            s = next;
                            p += 2;
                        }
                        None => return Ok(None),
                    }
                }
                _ => {
                    let ep = self.classend(p)?;
                    let suffix = self.p(ep);
                    if !self.singlematch(s, p, ep) {
                        if matches!(suffix, b'*' | b'?' | b'-') {
                            p = ep + 1;
                        } else {
                            return Ok(None);
                        }
                    } else {
                        match suffix {
                            b'?' => {
                                if let Some(res) = self.do_match(s + 1, ep + 1)? {
                                    return Ok(Some(res));
                                }
                                p = ep + 1;
                            }
                            b'+' => return self.max_expand(s + 1, p, ep),
                            b'*' => return self.max_expand(s, p, ep),
                            b'-' => return self.min_expand(s, p, ep),
                            _ => {
                                s += 1;
                                p = ep;
                            }
                        }
                    }
                }
            }
        }
    }

    /// The `i`th capture of a match of `s..e` (the whole match when there are no captures).
    fn get_onecapture(&self, i: usize, s: usize, e: usize) -> R<Capture> {
        if i >= self.level {
            if i != 0 {
                return err(format!("invalid capture index %{}", i + 1));
            }
            return Ok(Capture::Text(s, e));
        }
        let (init, len) = self.capture[i];
        match len {
            CAP_UNFINISHED => err("unfinished capture"),
            CAP_POSITION => Ok(Capture::Position(init + 1)),
            len => Ok(Capture::Text(init, init + len as usize)),
        }
    }

    fn capture_value(&self, lua: &Lua, i: usize, s: usize, e: usize) -> R<Value> {
        Ok(match self.get_onecapture(i, s, e)? {
            Capture::Text(a, b) => Value::String(lua.create_string(&self.src[a..b])?),
            Capture::Position(n) => Value::Integer(n as i64),
        })
    }

    /// Every capture; with `whole = Some((s, e))` and no captures, the whole match.
    fn captures(&self, lua: &Lua, whole: Option<(usize, usize)>) -> R<Vec<Value>> {
        let (s, e) = whole.unwrap_or((0, 0));
        let n = if self.level == 0 && whole.is_some() {
            1
        } else {
            self.level
        };
        (0..n).map(|i| self.capture_value(lua, i, s, e)).collect()
    }
}

fn match_class(c: u8, cl: u8) -> bool {
    let res = match cl.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'g' => c.is_ascii_graphic(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        // C's isspace: space, \t \n \v \f \r (Rust's is_ascii_whitespace lacks \v).
        b's' => c == b' ' || (b'\t'..=b'\r').contains(&c),
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        b'z' => c == 0,
        _ => return cl == c,
    };
    if cl.is_ascii_lowercase() { res } else { !res }
}

/// Lua's `posrelatI`: a 1-based start position, negative counting from the end.
fn posrelat(pos: i64, len: usize) -> usize {
    if pos > 0 {
        pos as usize
    } else if pos == 0 || pos < -(len as i64) {
        1
    } else {
        (len as i64 + pos + 1) as usize
    }
}

/// Argument `n` (1-based) as a string, numbers converted as Lua does.
fn check_string(lua: &Lua, args: &MultiValue, n: usize, f: &str) -> R<mlua::LuaString> {
    let v = args.get(n - 1).cloned().unwrap_or(Value::Nil);
    let type_name = if n > args.len() {
        "no value"
    } else {
        v.type_name()
    };
    match v {
        Value::String(s) => Ok(s),
        v @ (Value::Integer(_) | Value::Number(_)) => {
            Ok(lua.coerce_string(v)?.expect("numbers convert to strings"))
        }
        _ => err(format!(
            "bad argument #{n} to '{f}' (string expected, got {type_name})"
        )),
    }
}

/// Optional integer argument `n`, as `luaL_optinteger`.
fn opt_integer(lua: &Lua, args: &MultiValue, n: usize, f: &str, default: i64) -> R<i64> {
    match args.get(n - 1).cloned().unwrap_or(Value::Nil) {
        Value::Nil => Ok(default),
        Value::Integer(i) => Ok(i),
        v => {
            let type_name = v.type_name();
            match lua.coerce_integer(v.clone())? {
                Some(i) => Ok(i),
                None if lua.coerce_number(v)?.is_some() => err(format!(
                    "bad argument #{n} to '{f}' (number has no integer representation)"
                )),
                None => err(format!(
                    "bad argument #{n} to '{f}' (number expected, got {type_name})"
                )),
            }
        }
    }
}

fn find_aux(lua: &Lua, args: &MultiValue, find: bool) -> R<MultiValue> {
    let name = if find { "find" } else { "match" };
    let subject = check_string(lua, args, 1, name)?;
    let pattern = check_string(lua, args, 2, name)?;
    let (s, p) = (subject.as_bytes(), pattern.as_bytes());
    let ls = s.len();
    let init = posrelat(opt_integer(lua, args, 3, name, 1)?, ls) - 1;
    if init > ls {
        return Ok(MultiValue::from_vec(vec![Value::Nil]));
    }
    let plain = args
        .get(3)
        .is_some_and(|v| !matches!(v, Value::Nil | Value::Boolean(false)));
    if find && (plain || !p.iter().any(|c| SPECIALS.contains(c))) {
        if let Some(at) = memchr::memmem::find(&s[init..], &p) {
            let start = init + at;
            return Ok(MultiValue::from_vec(vec![
                Value::Integer(start as i64 + 1),
                Value::Integer((start + p.len()) as i64),
            ]));
        }
        return Ok(MultiValue::from_vec(vec![Value::Nil]));
    }
    let anchor = p.first() == Some(&b'^');
    let pat = if anchor { &p[1..] } else { &p[..] };
    let mut meter = Meter { lua, steps: 0 };
    let mut ms = MatchState::new(&s, pat, &mut meter);
    let mut s1 = init;
    loop {
        ms.reprep();
        if let Some(end) = ms.do_match(s1, 0)? {
            let out = if find {
                let mut out = vec![Value::Integer(s1 as i64 + 1), Value::Integer(end as i64)];
                out.extend(ms.captures(lua, None)?);
                out
            } else {
                ms.captures(lua, Some((s1, end)))?
            };
            return Ok(MultiValue::from_vec(out));
        }
        if anchor || s1 >= ls {
            break;
        }
        s1 += 1;
    }
    Ok(MultiValue::from_vec(vec![Value::Nil]))
}

fn gmatch(lua: &Lua, args: MultiValue) -> R<mlua::Function> {
    let subject = check_string(lua, &args, 1, "gmatch")?;
    let pattern = check_string(lua, &args, 2, "gmatch")?;
    let ls = subject.as_bytes().len();
    let init = posrelat(opt_integer(lua, &args, 3, "gmatch", 1)?, ls) - 1;
    // (next start, end of the last match): an empty match right after a match is skipped.
    let mut src = init.min(ls + 1);
    let mut lastmatch: Option<usize> = None;
    lua.create_function_mut(move |lua, ()| {
        let (s, p) = (subject.as_bytes(), pattern.as_bytes());
        let found = (|| -> R<MultiValue> {
            let mut meter = Meter { lua, steps: 0 };
            let mut ms = MatchState::new(&s, &p, &mut meter);
            while src <= ls {
                ms.reprep();
                if let Some(e) = ms.do_match(src, 0)?
                    && Some(e) != lastmatch
                {
                    let start = src;
                    src = e;
                    lastmatch = Some(e);
                    return Ok(MultiValue::from_vec(ms.captures(lua, Some((start, e)))?));
                }
                src += 1;
            }
            Ok(MultiValue::new())
        })();
        protect(lua, found)
    })
}

fn gsub(lua: &Lua, args: MultiValue) -> R<(Value, i64)> {
    let subject = check_string(lua, &args, 1, "gsub")?;
    let pattern = check_string(lua, &args, 2, "gsub")?;
    let repl = args.get(2).cloned().unwrap_or(Value::Nil);
    let (src, p) = (subject.as_bytes(), pattern.as_bytes());
    let srcl = src.len();
    let max_s = opt_integer(lua, &args, 4, "gsub", srcl as i64 + 1)?;
    if !matches!(
        repl,
        Value::Integer(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Function(_)
            | Value::Table(_)
    ) {
        let type_name = if args.len() < 3 {
            "no value"
        } else {
            repl.type_name()
        };
        return err(format!(
            "bad argument #3 to 'gsub' (string/function/table expected, got {type_name})"
        ));
    }
    let repl_text = match &repl {
        v @ (Value::Integer(_) | Value::Number(_)) => lua.coerce_string(v.clone())?,
        Value::String(s) => Some(s.clone()),
        _ => None,
    };
    let anchor = p.first() == Some(&b'^');
    let pat = if anchor { &p[1..] } else { &p[..] };
    let mut meter = Meter { lua, steps: 0 };
    let mut ms = MatchState::new(&src, pat, &mut meter);
    let mut out: Vec<u8> = Vec::new();
    let (mut at, mut lastmatch, mut n, mut changed) = (0usize, None, 0i64, false);
    while n < max_s {
        ms.reprep();
        match ms.do_match(at, 0)? {
            Some(e) if Some(e) != lastmatch => {
                n += 1;
                changed |= add_value(lua, &ms, &mut out, at, e, &repl, repl_text.as_ref())?;
                at = e;
                lastmatch = Some(e);
            }
            _ if at < srcl => {
                out.push(src[at]);
                at += 1;
            }
            _ => break,
        }
        if anchor {
            break;
        }
    }
    if !changed {
        return Ok((Value::String(subject.clone()), n));
    }
    out.extend_from_slice(&src[at..]);
    Ok((Value::String(lua.create_string(&out)?), n))
}

/// Appends the replacement of the match `s..e`; whether the subject changed.
fn add_value(
    lua: &Lua,
    ms: &MatchState<'_, '_>,
    out: &mut Vec<u8>,
    s: usize,
    e: usize,
    repl: &Value,
    repl_text: Option<&mlua::LuaString>,
) -> R<bool> {
    let value = match repl {
        Value::Function(f) => {
            f.call::<Value>(MultiValue::from_vec(ms.captures(lua, Some((s, e)))?))?
        }
        Value::Table(t) => t.get::<Value>(ms.capture_value(lua, 0, s, e)?)?,
        _ => {
            let text = repl_text
                .expect("string replacements are converted")
                .as_bytes();
            add_s(ms, out, s, e, &text)?;
            return Ok(true);
        }
    };
    match value {
        Value::Nil | Value::Boolean(false) => {
            out.extend_from_slice(&ms.src[s..e]);
            Ok(false)
        }
        v @ (Value::String(_) | Value::Integer(_) | Value::Number(_)) => {
            let text = lua.coerce_string(v)?.expect("strings and numbers convert");
            out.extend_from_slice(&text.as_bytes());
            Ok(true)
        }
        other => err(format!(
            "invalid replacement value (a {})",
            other.type_name()
        )),
    }
}

/// A replacement string with `%0`-`%9` and `%%`.
fn add_s(ms: &MatchState<'_, '_>, out: &mut Vec<u8>, s: usize, e: usize, news: &[u8]) -> R<()> {
    let mut i = 0;
    while let Some(at) = memchr::memchr(L_ESC, &news[i..]) {
        out.extend_from_slice(&news[i..i + at]);
        let c = news.get(i + at + 1).copied().unwrap_or(0);
        if c == L_ESC {
            out.push(L_ESC);
        } else if c == b'0' {
            out.extend_from_slice(&ms.src[s..e]);
        } else if c.is_ascii_digit() {
            match ms.get_onecapture(usize::from(c - b'1'), s, e)? {
                Capture::Text(a, b) => out.extend_from_slice(&ms.src[a..b]),
                Capture::Position(n) => out.extend_from_slice(n.to_string().as_bytes()),
            }
        } else {
            return err("invalid use of '%' in replacement string");
        }
        i += at + 2;
    }
    out.extend_from_slice(&news[i.min(news.len())..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use mlua::Lua;

    use super::super::{
        sources::Resolver,
        state::{Limits, new_state},
    };

    /// C Lua and the sandbox, side by side.
    struct Pair(Lua, Lua, regex::Regex);

    impl Pair {
        fn new() -> Self {
            let ours = new_state(Resolver::from_disk(Path::new(".")), Limits::default()).unwrap();
            // Our errors name the caller's line; C's name none.
            let location = regex::Regex::new(r"string:t\.lua:\d+: ").unwrap();
            Pair(Lua::new(), ours, location)
        }

        /// Runs `expr` in C Lua and in the sandbox and returns both results, serialized.
        fn both(&self, expr: &str) -> (String, String) {
            let code = format!(
                r##"
            local function collect(f, ...)
              if type(f) ~= "function" then return f, ... end
              local out = {{}}
              for a, b in f, ... do out[#out + 1] = tostring(a) .. "/" .. tostring(b) end
              return table.concat(out, " ")
            end
            local function ser(...)
              local out = {{}}
              for i = 1, select("#", ...) do
                local v = select(i, ...)
                out[#out + 1] = math.type(v) or type(v) .. ":" .. tostring(v)
                if math.type(v) then out[#out] = out[#out] .. ":" .. tostring(v) end
              end
              return table.concat(out, ", ")
            end
            return ser(pcall(function() return collect({expr}) end))
            "##
            );
            let run = |lua: &Lua| -> String {
                let text: mlua::LuaString = lua.load(&code).set_name("@t.lua").eval().unwrap();
                let text = text.to_string_lossy();
                self.2.replace_all(&text, "string:").into_owned()
            };
            (run(&self.0), run(&self.1))
        }
    }

    const CASES: &[&str] = &[
        r#"string.find("hello world", "o w")"#,
        r#"string.find("hello world", "o", 6)"#,
        r#"string.find("hello world", "o", -3)"#,
        r#"string.find("hello world", "o", -100)"#,
        r#"string.find("hello", "l", 10)"#,
        r#"string.find("hello", "", 6)"#,
        r#"string.find("hello", "", 7)"#,
        r#"string.find("a.b", ".", 1, true)"#,
        r#"string.find("a+b", "+", 1, true)"#,
        r#"string.find("abc", "b", 1, false)"#,
        r#"string.find("hello", "(l)(l)")"#,
        r#"string.find("hello", "()ll()")"#,
        r#"string.find("hello", "^h")"#,
        r#"string.find("hello", "^e")"#,
        r#"string.find("hello", "o$")"#,
        r#"string.find("hel$lo", "l$l")"#,
        r#"string.match("key = value", "(%w+)%s*=%s*(%w+)")"#,
        r#"string.match("  trim  ", "^%s*(.-)%s*$")"#,
        r#"string.match("f(a(b)c)d", "%b()")"#,
        r#"string.match("THE (quick) fox", "%f[%a]%a+")"#,
        r#"string.match("THE (quick) fox", "%f[%l]%a+")"#,
        r#"string.match("hello", "%f[%z]")"#,
        r#"string.match("abcabc", "(abc)%1")"#,
        r#"string.match("abab", "(a)(b)%2")"#,
        r#"string.match("x = 10, y = 20", "y = (%d+)")"#,
        r#"string.match("a1!B2 \t\n", "%a%d%p%u%d%s%s%s")"#,
        r#"string.match("\0\1\127 ", "%c+")"#,
        r#"string.match("é ü", "%a")"#,
        r#"string.match("caf\xe9", "[\xe0-\xff]")"#,
        r#"string.match("0x1F", "0x(%x+)")"#,
        r#"string.match("abc]", "[%]]")"#,
        r#"string.match("a-b", "[a%-]+")"#,
        r#"string.match("a-b", "[-a]+")"#,
        r#"string.match("a^b", "[b^]+")"#,
        r#"string.match("abc", "[^a]+")"#,
        r#"string.match("abc", "[]")"#,
        r#"string.match("a]c", "[]]")"#,
        r#"string.match("aaa", "a-b")"#,
        r#"string.match("aaab", "a-b")"#,
        r#"string.match("color colour", "colou?r")"#,
        r#"string.match("aXb", "%Ab")"#,
        r#"string.match("a\0b", "a%zb")"#,
        r#"string.match("a\0b", "a\0b")"#,
        r#"string.match("hello", "()")"#,
        r#"string.match("hello", "")"#,
        r#"string.match("", "x*")"#,
        r#"string.match(12345, 3)"#,
        r#"string.match("hello", ".-(l+)(.*)")"#,
        r#"("hello"):find("l")"#,
        r#"("hello"):match("(h)(e)")"#,
        r#"string.gsub("hello world", "o", "0")"#,
        r#"string.gsub("hello world", "(o)", "[%1%0%%]")"#,
        r#"string.gsub("hello", "", "-")"#,
        r#"string.gsub("abc", "x*", "-")"#,
        r#"string.gsub("abc", "%w", "%0%0", 2)"#,
        r#"string.gsub("abc", "^%w", "X")"#,
        r#"string.gsub("hello world", "%w+", {hello = "HI", world = false})"#,
        r#"string.gsub("hello world", "(%w+)", function(w) if w == "world" then return nil end return w:upper() end)"#,
        r#"string.gsub("a b", "%w", function() return 7 end)"#,
        r#"string.gsub("a b", "%w", function() return 1.5 end)"#,
        r#"string.gsub("abc", "b", 5)"#,
        r#"string.gsub("abc", "()", "%1")"#,
        r#"string.gsub("abc", "b", "%1")"#,
        r#"string.gsub("abc", "b", "%2")"#,
        r#"string.gsub("abc", "b", "%x")"#,
        r#"string.gsub("abc", "b", "%")"#,
        r#"string.gsub("abc", "b", true)"#,
        r#"string.gsub("abc", "b")"#,
        r#"string.gsub("abc", "b", function() return {} end)"#,
        r#"string.gsub("abc", "b", "x", -1)"#,
        r#"string.gmatch("one two  three", "%a+")"#,
        r#"string.gmatch("k1=v1, k2=v2", "(%w+)=(%w+)")"#,
        r#"string.gmatch("abc", "x*")"#,
        r#"string.gmatch("abc", "()")"#,
        r#"string.gmatch("hello hello", "hello", 3)"#,
        r#"string.gmatch("^a^a", "^a")"#,
        r#"string.find("abc", "%")"#,
        r#"string.find("abc", "[a")"#,
        r#"string.find("abc", "[a%")"#,
        r#"string.find("abc", "(()")"#,
        r#"string.find("abc", "a)")"#,
        r#"string.find("abc", "%1")"#,
        r#"string.find("abc", "(a%1)")"#,
        r#"string.find("abc", "%f")"#,
        r#"string.find("abc", "%fa")"#,
        r#"string.find("abc", "%b")"#,
        r#"string.find("abc", "%bx")"#,
        r#"string.find("abc", ("()"):rep(33))"#,
        r#"string.find("abc", ("()"):rep(32))"#,
        r#"string.match(("a"):rep(300), ("a?"):rep(300))"#,
        r#"string.find(nil, "x")"#,
        r#"string.find("x")"#,
        r#"string.find("x", "x", 1.5)"#,
        r#"string.find("x", "x", "2")"#,
        r#"string.find("x", "x", {})"#,
    ];

    #[test]
    fn the_port_matches_c_lua_on_every_case() {
        let pair = Pair::new();
        for case in CASES {
            let (c, ours) = pair.both(case);
            assert_eq!(ours, c, "{case}");
        }
    }

    #[test]
    fn the_port_matches_c_lua_on_random_patterns() {
        const PIECES: &[&str] = &[
            "a", "b", ".", "%a", "%d", "%s", "%W", "[ab]", "[^a]", "[a-c]", "%%", "(", ")", "()",
            "*", "+", "-", "?", "^", "$", "%b()", "%f[%w]", "%1", "x",
        ];
        const SUBJECT: &[u8] = b"ab1 (c)a-b%ba";
        let pair = Pair::new();
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..1500 {
            let pattern: String = (0..1 + next(6))
                .map(|_| PIECES[next(PIECES.len())])
                .collect();
            let subject: String = (0..next(10))
                .map(|_| SUBJECT[next(SUBJECT.len())] as char)
                .collect();
            let (p, s) = (format!("{pattern:?}"), format!("{subject:?}"));
            for expr in [
                format!("string.find({s}, {p})"),
                format!("string.match({s}, {p}, 2)"),
                format!("string.gsub({s}, {p}, '<%0>')"),
                format!("string.gmatch({s}, {p})"),
            ] {
                let (c, ours) = pair.both(&expr);
                assert_eq!(ours, c, "{expr}");
            }
        }
    }
}
