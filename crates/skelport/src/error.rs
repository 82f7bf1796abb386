//! The error every fallible function of this crate returns.

use skelport_ir::{Diagnostics, FaultKind, FormatError, Place};
use std::fmt;

/// A stable, machine-readable kind of [`Error`] (`Error::code().as_str()`), for scripts and the
/// JSON reports: the message may be reworded, the code stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// No registered format has the name given (`--from`, `--to`).
    UnknownFormat,
    /// The format named cannot read (or cannot write) files.
    Unsupported,
    /// The format of an input could not be told from its name or its content.
    Undetected,
    /// An input (or a file it names) could not be opened or read, or is over a size limit.
    Input,
    /// The reader refused the file: the message names the place in it.
    Read,
    /// The document breaks the IR's rules (`skelport_ir::validate`).
    Invalid,
    /// A retarget map is unknown, broken or does not fit the document.
    Map,
    /// The target's writer refused the document.
    Write,
    /// `strict` was set and the conversion loses something.
    Strict,
    /// An output could not be written.
    Output,
    /// A file is of another kind than where it was given (an MPFB weights file as the rig, an
    /// OBJ as `--weights`): the message says where it goes.
    Kind,
    /// The conversion would leave the user without what they asked for (a whole skin, or most
    /// of its weights, dropped) and `allow_loss` was not set.
    Loss,
}

impl ErrorCode {
    /// The stable code: `format.unknown`, `format.unsupported`, `format.undetected`, `input`,
    /// `read`, `invalid`, `map`, `write`, `strict`, `output`, `input.kind`, `loss`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownFormat => "format.unknown",
            ErrorCode::Unsupported => "format.unsupported",
            ErrorCode::Undetected => "format.undetected",
            ErrorCode::Input => "input",
            ErrorCode::Read => "read",
            ErrorCode::Invalid => "invalid",
            ErrorCode::Map => "map",
            ErrorCode::Write => "write",
            ErrorCode::Strict => "strict",
            ErrorCode::Output => "output",
            ErrorCode::Kind => "input.kind",
            ErrorCode::Loss => "loss",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The interface an error's advice is said in: the command line names its flags (`--from`),
/// Python its keyword arguments (`format=`). [`Error`]'s `Display` is the command line's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Front {
    /// `skelport …`: flags.
    Cli,
    /// `import skelport`: keyword arguments.
    Python,
}

impl Front {
    /// Text written for the command line (a diagnostic's message: [`Words::from_cli`]) as this
    /// front end says it; the command line's is the text itself.
    pub fn say(self, text: &str) -> String {
        match self {
            Front::Cli => text.to_owned(),
            _ => Words::from_cli(text).said(self),
        }
    }
}

/// An option of reading or converting, as advice names it; each front end says it in its own
/// words ([`Opt::said`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Opt {
    /// The input's format (`OpenOptions::from`).
    From,
    /// The output's format.
    To,
    /// A weights file joined to a rig.
    Weights,
    /// A mesh read with a rig or weights.
    Mesh,
    /// A retarget or humanoid map.
    Map,
    /// Refuse any loss.
    Strict,
    /// Accept a conversion that leaves a skin behind.
    AllowLoss,
    /// Embed side files.
    Embed,
    /// The rest pose to write.
    RestPose,
    /// The pose test of `diff`.
    PoseTest,
    /// The target of `validate`.
    Target,
    /// Give unweighted vertices their nearest weighted neighbour's weights.
    Fix,
    /// The most bones the target may hold.
    Limit,
    /// Keep MPFB's helper geometry's weights.
    KeepHelpers,
    /// Keep a MakeHuman 1.x rig at the base mesh's origin.
    KeepOrigin,
    /// A bone-name list (AnvilToolkit hashes).
    Names,
    /// Second Life joints at the default skeleton's positions.
    DefaultJoints,
    /// Joints per vertex.
    MaxInfluences,
    /// A VRM's meta (name, authors, licence).
    VrmMeta,
    /// Files a document names outside its own folder (a glTF buffer `../x.bin`).
    AllowOutsideUris,
}

impl Opt {
    /// How `front` names the option: `--allow-loss` / `allow_loss=True`.
    pub fn said(self, front: Front) -> &'static str {
        match (front, self) {
            (Front::Cli, Opt::From) => "--from",
            (Front::Cli, Opt::To) => "--to",
            (Front::Cli, Opt::Weights) => "--weights",
            (Front::Cli, Opt::Mesh) => "--mesh",
            (Front::Cli, Opt::Map) => "--map",
            (Front::Cli, Opt::Strict) => "--strict",
            (Front::Cli, Opt::AllowLoss) => "--allow-loss",
            (Front::Cli, Opt::Embed) => "--embed",
            (Front::Cli, Opt::RestPose) => "--rest-pose",
            (Front::Cli, Opt::PoseTest) => "--pose-test",
            (Front::Cli, Opt::Target) => "--target",
            (Front::Cli, Opt::Fix) => "--fix",
            (Front::Cli, Opt::Limit) => "--limit",
            (Front::Cli, Opt::KeepHelpers) => "--keep-helpers",
            (Front::Cli, Opt::KeepOrigin) => "--keep-origin",
            (Front::Cli, Opt::Names) => "--names",
            (Front::Cli, Opt::DefaultJoints) => "--default-joints",
            (Front::Cli, Opt::MaxInfluences) => "--max-influences",
            (Front::Cli, Opt::VrmMeta) => "--vrm-meta",
            (Front::Cli, Opt::AllowOutsideUris) => "--allow-outside-uris",
            (Front::Python, Opt::From) => "format=",
            (Front::Python, Opt::To) => "to=",
            (Front::Python, Opt::Weights) => "weights=",
            (Front::Python, Opt::Mesh) => "mesh=",
            (Front::Python, Opt::Map) => "map=",
            (Front::Python, Opt::Strict) => "strict=True",
            (Front::Python, Opt::AllowLoss) => "allow_loss=True",
            (Front::Python, Opt::Embed) => "embed=True",
            (Front::Python, Opt::RestPose) => "rest_pose=",
            (Front::Python, Opt::PoseTest) => "pose_test=True",
            (Front::Python, Opt::Target) => "target=",
            (Front::Python, Opt::Fix) => "fix=True",
            (Front::Python, Opt::Limit) => "limit=",
            (Front::Python, Opt::KeepHelpers) => "keep_helpers=True",
            (Front::Python, Opt::KeepOrigin) => "keep_origin=True",
            (Front::Python, Opt::Names) => "names=",
            (Front::Python, Opt::DefaultJoints) => "default_joints=True",
            (Front::Python, Opt::MaxInfluences) => "max_influences=",
            (Front::Python, Opt::VrmMeta) => "vrm_meta=",
            (Front::Python, Opt::AllowOutsideUris) => "allow_outside_uris=True",
        }
    }
    /// Every option, for finding one by its flag ([`Opt::from_flag`]).
    pub const ALL: [Opt; 20] = [
        Opt::From,
        Opt::To,
        Opt::Weights,
        Opt::Mesh,
        Opt::Map,
        Opt::Strict,
        Opt::AllowLoss,
        Opt::Embed,
        Opt::RestPose,
        Opt::PoseTest,
        Opt::Target,
        Opt::Fix,
        Opt::Limit,
        Opt::KeepHelpers,
        Opt::KeepOrigin,
        Opt::Names,
        Opt::DefaultJoints,
        Opt::MaxInfluences,
        Opt::VrmMeta,
        Opt::AllowOutsideUris,
    ];
    /// The option whose command-line flag is `flag` (`--mesh`), if it is one of these.
    pub fn from_flag(flag: &str) -> Option<Opt> {
        Opt::ALL.into_iter().find(|o| o.said(Front::Cli) == flag)
    }
}

/// Text that names options, kept as data until a front end says it ([`Words::said`]), so that
/// the command line prints `--from` where Python says `format=`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Words(Vec<Piece>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Opt(Opt),
}

impl Words {
    /// Words beginning with `text`, taken as it is.
    pub fn new(text: impl Into<String>) -> Self {
        Words(vec![Piece::Text(text.into())])
    }
    /// Words from text written for the command line: each flag in it that names an [`Opt`]
    /// (`--mesh`, `--map`, standing as a word of its own) becomes that option, so that another
    /// front end says it in its words. The format crates and diagnostics name options so (they
    /// know no front end); this is where their advice becomes data. A flag no front end but the
    /// command line has stays as it is.
    pub fn from_cli(text: &str) -> Self {
        let mut words = Words::default();
        let mut rest = text;
        let mut start = 0;
        while let Some(at) = rest[start..].find("--").map(|i| start + i) {
            let before = rest[..at].chars().next_back();
            let name_len = rest[at + 2..].find(|c: char| !(c.is_ascii_lowercase() || c == '-')).unwrap_or(rest.len() - at - 2);
            let flag = rest[at..at + 2 + name_len].trim_end_matches('-');
            let after = rest[at + flag.len()..].chars().next();
            let word = !before.is_some_and(|c| c.is_alphanumeric() || "_/.-".contains(c))
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
            match Opt::from_flag(flag).filter(|_| word) {
                Some(opt) => {
                    if at > 0 {
                        words.0.push(Piece::Text(rest[..at].to_owned()));
                    }
                    words.0.push(Piece::Opt(opt));
                    rest = &rest[at + flag.len()..];
                    start = 0;
                }
                None => start = at + 2,
            }
        }
        if !rest.is_empty() {
            words.0.push(Piece::Text(rest.to_owned()));
        }
        words
    }
    /// Then `text`.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.0.push(Piece::Text(text.into()));
        self
    }
    /// Then the option `opt`, as the front end names it.
    pub fn opt(mut self, opt: Opt) -> Self {
        self.0.push(Piece::Opt(opt));
        self
    }
    /// Then `other`.
    pub fn then(mut self, other: Words) -> Self {
        self.0.extend(other.0);
        self
    }
    /// The words as `front` says them.
    pub fn said(&self, front: Front) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.as_str(),
                Piece::Opt(o) => o.said(front),
            })
            .collect()
    }
    /// The options named, in order (for tests: a message for Python names none of the CLI's).
    pub fn options(&self) -> impl Iterator<Item = Opt> + '_ {
        self.0.iter().filter_map(|p| match p {
            Piece::Opt(o) => Some(*o),
            Piece::Text(_) => None,
        })
    }
}

/// Text written for the command line ([`Words::from_cli`]): the messages of the format crates,
/// of `anyhow` chains and of diagnostics name options by their flags.
impl From<String> for Words {
    fn from(s: String) -> Self {
        Words::from_cli(&s)
    }
}

/// As `From<String>`.
impl From<&str> for Words {
    fn from(s: &str) -> Self {
        Words::from_cli(s)
    }
}

/// Why reading, converting or saving failed, as data: what kind of failure ([`Error::code`]),
/// the file it is about ([`Error::file`]), the place in that file ([`Error::place`]), the kind
/// of fault the reader found there ([`Error::fault`]), what is wrong and what to do (the
/// message, whose advice names options in the words of the front end that renders it:
/// [`Error::said`]), and what was reported before it failed ([`Error::diagnostics`]: a reader's
/// warnings, a retarget map's losses), so a report can show them. `Display` is the command
/// line's message (`error: ` is printed before it).
#[derive(Debug)]
pub struct Error {
    code: ErrorCode,
    file: Option<String>,
    // Boxed: the error travels in every `Result` of the facade, and a `Place` inline would make
    // it larger than clippy's `result_large_err` bound (128 bytes).
    place: Option<Box<Place>>,
    fault: Option<FaultKind>,
    message: Words,
    diagnostics: Diagnostics,
    format: Option<&'static str>,
}

impl Error {
    /// An error of kind `code` about `file` (as named: a path, `-`, or an in-memory name).
    pub fn new(code: ErrorCode, file: Option<&str>, message: impl Into<Words>) -> Self {
        Error {
            code,
            file: file.map(str::to_owned),
            place: None,
            fault: None,
            message: message.into(),
            diagnostics: Diagnostics::default(),
            format: None,
        }
    }
    /// A reader's error about the input `name` read as `format`: the message is made from the
    /// reader's data (`name:3:17: cannot read as gltf: …; fix`, or `name: cannot read as mpfb:
    /// base.obj:12: …` when the fault is in a file read with it), and the file, place and kind
    /// are kept as they are.
    pub fn read(name: &str, format: &'static str, e: FormatError) -> Self {
        let what = e.what();
        let file = e.file.clone().unwrap_or_else(|| name.to_owned());
        let message = if file == name {
            match &e.place {
                Some(p @ Place::Text { .. }) => format!("{name}{}: cannot read as {format}: {what}", p.after_file()),
                Some(p) => format!("{name}: cannot read as {format}: {p}: {what}"),
                None => format!("{name}: cannot read as {format}: {what}"),
            }
        } else {
            format!("{name}: cannot read as {format}: {file}{}: {what}", e.place.as_ref().map(Place::after_file).unwrap_or_default())
        };
        Error { place: e.place.map(Box::new), fault: Some(e.kind), ..Error::new(ErrorCode::Read, Some(&file), message) }.with_format(format)
    }
    /// The same error, at `place` in its file (`line 3, column 17`, `/accessors/1`,
    /// `$.bones.calf_l`, `bone "x"`).
    pub fn at(mut self, place: Place) -> Self {
        self.place = Some(Box::new(place));
        self
    }
    /// The same error, saying which format the input was told to be (kept when reading failed).
    pub fn with_format(mut self, format: &'static str) -> Self {
        self.format = Some(format);
        self
    }
    /// The format the input was detected (or named) as, when it got that far, even if reading
    /// it then failed.
    pub fn format(&self) -> Option<&'static str> {
        self.format
    }
    /// An error of kind `code` from an `anyhow` chain, its contexts joined as `{:#}` prints them.
    pub(crate) fn from_chain(code: ErrorCode, file: Option<&str>, e: &anyhow::Error) -> Self {
        Error::new(code, file, format!("{e:#}"))
    }
    /// The same error about the file `name`, its message beginning with it (`name: …`).
    pub(crate) fn in_file(mut self, name: &str) -> Self {
        self.message = Words::new(format!("{name}: ")).then(self.message);
        self.file = Some(name.to_owned());
        self
    }
    /// The same error carrying the diagnostics reported before it.
    pub fn with_diagnostics(mut self, diagnostics: Diagnostics) -> Self {
        self.diagnostics = diagnostics;
        self
    }
    /// What kind of failure this is.
    pub fn code(&self) -> ErrorCode {
        self.code
    }
    /// The file the error is about, as it was named, when there is one: the input, or the mesh
    /// or weights file read with it when the fault is there.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
    /// Where in [`Error::file`] the fault is, as the reader gave it (a line and column, a byte,
    /// a JSON pointer or path, an element), or, for a document that breaks the IR's rules, the
    /// first broken rule's place.
    pub fn location(&self) -> Option<&Place> {
        self.place.as_deref()
    }
    /// [`Error::location`] as text: `line 3, column 17`, `line 12`, `byte 40`,
    /// `/accessors/1/bufferView`, `$.bones.calf_l.head`, `accessors[0]`, `JSON chunk, line 1,
    /// column 2`, `bone "x"`.
    pub fn place(&self) -> Option<String> {
        self.place.as_deref().map(Place::to_string)
    }
    /// The kind of fault a reader found ([`Error::code`] is then [`ErrorCode::Read`]).
    pub fn fault(&self) -> Option<FaultKind> {
        self.fault
    }
    /// The whole message as the command line prints it (what is wrong, where, and what to do).
    pub fn message(&self) -> String {
        self.message.said(Front::Cli)
    }
    /// The whole message, its advice in `front`'s words.
    pub fn said(&self, front: Front) -> String {
        self.message.said(front)
    }
    /// The message as data.
    pub fn words(&self) -> &Words {
        &self.message
    }
    /// What was reported before the failure.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }
    /// Take the diagnostics out (for a report that lists them).
    pub fn take_diagnostics(&mut self) -> Diagnostics {
        std::mem::take(&mut self.diagnostics)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message.said(Front::Cli))
    }
}

impl std::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_in_command_line_text_become_options_each_front_end_names() {
        let cases = [
            ("use --map (e.g. x) for an SL rig", "use map= (e.g. x) for an SL rig"),
            ("give the body with --mesh (base.obj)", "give the body with mesh= (base.obj)"),
            ("(--keep-helpers keeps them)", "(keep_helpers=True keeps them)"),
            ("--map mixamo-to-s1: no built-in map", "map= mixamo-to-s1: no built-in map"),
            ("give `--from` the format", "give `format=` the format"),
            ("--strict: 2 loss(es)", "strict=True: 2 loss(es)"),
            // Not a flag of an option, or not a word of its own: left as it is.
            ("put it there (--allow-outside-uris)", "put it there (allow_outside_uris=True)"),
            ("print it (--json)", "print it (--json)"),
            ("a--map b --mapper c path/--mesh", "a--map b --mapper c path/--mesh"),
            ("-- --", "-- --"),
            ("", ""),
        ];
        for (cli, python) in cases {
            assert_eq!(Words::from_cli(cli).said(Front::Cli), cli);
            assert_eq!(Front::Python.say(cli), python, "{cli}");
        }
        assert_eq!(Words::from_cli("use --map or --mesh").options().collect::<Vec<_>>(), [Opt::Map, Opt::Mesh]);
        for o in Opt::ALL {
            assert_eq!(Opt::from_flag(o.said(Front::Cli)), Some(o));
        }
    }
}
