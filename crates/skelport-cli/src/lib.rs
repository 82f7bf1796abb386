//! The `skelport` command line's flags (clap definitions), apart from the binary so that xtask
//! writes the man page from the same definition. Not a library API: the library is `skelport`.

pub mod flags;
