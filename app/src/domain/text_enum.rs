//! The one way a state is written down: an enum whose variants are fixed words.
//!
//! [`text_enum!`] declares such an enum once and gives it everything each layer needs, so the
//! word for a state is spelled in exactly one place:
//!
//! - the domain and the browser: `as_str`, `parse`, `ALL`, `Display`, `FromStr`, and serde as
//!   the same words (the wire types carry the enum, never a `String`);
//! - the database (`ssr`): sea-orm's `DeriveActiveEnum` over a text column, so entities hold the
//!   enum and filters take it (`Column::Status.eq(RunStatus::Dead)`);
//! - the REST API's document (`ssr`): utoipa's `ToSchema`, a string enum of the same words;
//! - the command line (`clap`): `ValueEnum`, so `--status retry_wait` is checked by clap against
//!   the same list (before, a hand-written list forgot `blocked`).
//!
//! Raw SQL binds `as_str()` as a value; it never spells a word itself.

/// A word that is not one of an enum's variants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{got}' is not one of: {}", .expected.join(", "))]
pub struct UnknownWord {
    pub got: String,
    pub expected: &'static [&'static str],
}

/// Declares an enum of fixed words (see the module's documentation).
///
/// ```ignore
/// text_enum! {
///     /// Where a run is in its life.
///     pub enum RunStatus { Pending = "pending", Running = "running" }
/// }
/// ```
#[macro_export]
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Serialize, serde::Deserialize,
        )]
        #[cfg_attr(feature = "ssr", derive(sea_orm::EnumIter, sea_orm::DeriveActiveEnum))]
        #[cfg_attr(feature = "ssr", sea_orm(rs_type = "String", db_type = "Text"))]
        #[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
        #[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
        $vis enum $name {
            $(
                $(#[$vmeta])*
                #[serde(rename = $text)]
                #[cfg_attr(feature = "ssr", sea_orm(string_value = $text))]
                #[cfg_attr(feature = "clap", value(name = $text))]
                $variant,
            )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every word, in declaration order.
            pub const WORDS: &'static [&'static str] = &[$($text),+];

            /// The stored and displayed word.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The variant a word names, if any (exact match).
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::domain::text_enum::UnknownWord;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                $name::parse(text.trim()).ok_or_else(|| $crate::domain::text_enum::UnknownWord {
                    got: text.trim().to_string(),
                    expected: $name::WORDS,
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::text_enum! {
        /// A test enum.
        enum Colour { Red = "red", DarkBlue = "dark_blue" }
    }

    #[test]
    fn words_round_trip_everywhere() {
        for c in Colour::ALL {
            assert_eq!(Colour::parse(c.as_str()), Some(*c));
            assert_eq!(c.to_string().parse::<Colour>(), Ok(*c));
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<Colour>(&json).unwrap(), *c);
        }
        let err = "green".parse::<Colour>().unwrap_err();
        assert_eq!(err.to_string(), "'green' is not one of: red, dark_blue");
    }
}
