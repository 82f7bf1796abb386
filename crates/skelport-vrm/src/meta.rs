//! `VRMC_vrm.meta`: the model's name, authors and licence terms.
//!
//! Given with `--vrm-meta meta.json` (the meta object as VRM 1.0 names its fields,
//! `schemas/vrm-meta.schema.json`), kept from a VRM source, or else placeholders. The licence
//! terms are never made up: whatever is not given is written as the most restrictive value VRM
//! allows (which are also the specification's defaults).

use crate::error::VrmError;
use crate::spec;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use skelport_ir::{Diagnostics, Place};

/// The meta object as a file gives it (VRM 1.0 field names; `name` and `authors` required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Meta {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub authors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copyright_information: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_information: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub third_party_licenses: Option<String>,
    /// An image index: skelport writes no images, so it is dropped (a loss).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbnail_image: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avatar_permission: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_excessively_violent_usage: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_excessively_sexual_usage: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commercial_usage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_political_or_religious_usage: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_antisocial_or_hate_usage: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_notation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_redistribution: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modification: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_license_url: Option<String>,
}

impl Meta {
    /// Parse and check a meta file; `file` names it in errors.
    pub fn parse(bytes: &[u8], file: &str) -> Result<Meta, VrmError> {
        let err = |message: String| VrmError::Meta { file: file.to_owned(), message };
        let m: Meta = serde_json::from_slice(bytes).map_err(|e| {
            err(format!(
                "line {}, column {}: {e}; the meta file is VRM 1.0's meta object (schemas/vrm-meta.schema.json)",
                e.line(),
                e.column()
            ))
        })?;
        m.check().map_err(err)?;
        Ok(m)
    }

    /// Read a meta object kept from a VRM source (checked like a file).
    pub fn from_value(v: &Value) -> Option<Meta> {
        serde_json::from_value::<Meta>(v.clone()).ok().filter(|m| m.check().is_ok())
    }

    /// VRM 1.0's rules for the fields a file may give.
    fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("\"name\" must not be empty".into());
        }
        if self.authors.is_empty() || self.authors.iter().any(|a| a.trim().is_empty()) {
            return Err("\"authors\" must list at least one author, none empty".into());
        }
        if self.references.as_ref().is_some_and(Vec::is_empty) {
            return Err("\"references\", when given, must list at least one".into());
        }
        if let Some(u) = self.license_url.as_deref().filter(|u| *u != spec::LICENSE_URL) {
            return Err(format!(
                "\"licenseUrl\" is \"{u}\", but VRM 1.0 takes only \"{}\" (the VRM Public License, whose terms the other fields set); put another licence's address in \"otherLicenseUrl\"",
                spec::LICENSE_URL
            ));
        }
        for (field, value, allowed) in [
            ("avatarPermission", &self.avatar_permission, spec::AVATAR_PERMISSION),
            ("commercialUsage", &self.commercial_usage, spec::COMMERCIAL_USAGE),
            ("creditNotation", &self.credit_notation, spec::CREDIT_NOTATION),
            ("modification", &self.modification, spec::MODIFICATION),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !allowed.contains(v)) {
                return Err(format!("\"{field}\" is \"{v}\"; VRM 1.0 allows {}", allowed.join(", ")));
            }
        }
        Ok(())
    }

    /// Placeholders for a model nobody described: `name` (the output's stem or the skeleton's
    /// name) and an author saying none was given. The licence terms stay unset (most restrictive).
    pub fn placeholder(name: &str) -> Meta {
        Meta {
            name: if name.trim().is_empty() { "unnamed avatar".into() } else { name.to_owned() },
            version: None,
            authors: vec!["unknown (no --vrm-meta given)".into()],
            copyright_information: None,
            contact_information: None,
            references: None,
            third_party_licenses: None,
            thumbnail_image: None,
            license_url: None,
            avatar_permission: None,
            allow_excessively_violent_usage: None,
            allow_excessively_sexual_usage: None,
            commercial_usage: None,
            allow_political_or_religious_usage: None,
            allow_antisocial_or_hate_usage: None,
            credit_notation: None,
            allow_redistribution: None,
            modification: None,
            other_license_url: None,
        }
    }

    /// The JSON written: every field given, and every licence term that was not given at its
    /// most restrictive value, written out so no reader has to know the defaults.
    pub fn to_json(&self, diag: &mut Diagnostics) -> Value {
        let mut m = self.clone();
        if m.thumbnail_image.take().is_some() {
            diag.loss("vrm.thumbnail", "meta.thumbnailImage dropped: skelport writes no images");
        }
        let mut unset = Vec::new();
        let mut pick = |field: &'static str, v: &mut Option<String>, allowed: &[&str]| {
            if v.is_none() {
                unset.push(field);
                *v = Some(allowed[0].to_owned());
            }
        };
        pick("avatarPermission", &mut m.avatar_permission, spec::AVATAR_PERMISSION);
        pick("commercialUsage", &mut m.commercial_usage, spec::COMMERCIAL_USAGE);
        pick("creditNotation", &mut m.credit_notation, spec::CREDIT_NOTATION);
        pick("modification", &mut m.modification, spec::MODIFICATION);
        m.license_url.get_or_insert_with(|| spec::LICENSE_URL.to_owned());
        let mut v = serde_json::to_value(&m).unwrap_or_else(|_| json!({}));
        let o: &mut Map<String, Value> = v.as_object_mut().expect("an object");
        for flag in spec::ALLOW_FLAGS {
            if !o.contains_key(*flag) {
                unset.push(flag);
                o.insert((*flag).to_owned(), json!(false));
            }
        }
        if !unset.is_empty() {
            diag.info(
                "vrm.meta-restrictive",
                format!("meta: {} not given; written as the most restrictive values VRM 1.0 allows", unset.join(", ")),
            );
        }
        v
    }
}

/// VRM 0.x's meta (`extensions.VRM.meta`) as VRM 1.0's, field by field as UniVRM's migration
/// (`MigrationVrmMeta`) maps it: `title` → `name`, `author` → `authors`, `reference` →
/// `references`, `texture` → `thumbnailImage` (that texture's image), `allowedUserName` →
/// `avatarPermission`, the `…UssageName` permissions → `allowExcessivelyViolentUsage`,
/// `allowExcessivelySexualUsage` and `commercialUsage` (`Allow` → `personalProfit`),
/// `otherLicenseUrl` and `otherPermissionUrl` → `otherLicenseUrl`; redistribution, modification,
/// credit and political use at their most restrictive. `licenseName` has no 1.0 field (UniVRM
/// drops it too): a loss names it. `root` is the glTF JSON (for the texture's image);
/// `fallback_name` names a model whose title is empty.
pub fn from_v0(v0: &Value, root: &Value, fallback_name: &str, diag: &mut Diagnostics) -> Meta {
    const AT: &str = "/extensions/VRM/meta";
    let text = |k: &str| v0.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let mut m = Meta::placeholder(fallback_name);
    match text("title") {
        Some(t) => m.name = t,
        None => {
            diag.warn_at("vrm.v0-meta", Place::path(format!("{AT}/title")), format!("{AT}/title is empty: meta.name is \"{}\"", m.name))
        }
    }
    match text("author") {
        Some(a) => m.authors = vec![a],
        None => {
            m.authors = vec!["unknown (the VRM 0.x meta names no author)".into()];
            diag.warn_at(
                "vrm.v0-meta",
                Place::path(format!("{AT}/author")),
                format!("{AT}/author is empty: meta.authors is \"{}\"", m.authors[0]),
            );
        }
    }
    m.version = text("version");
    m.contact_information = text("contactInformation");
    m.references = text("reference").map(|r| vec![r]);
    m.thumbnail_image =
        v0.get("texture").and_then(Value::as_u64).and_then(|t| root.pointer(&format!("/textures/{t}/source"))).and_then(Value::as_u64);
    let enumerated = |k: &str, from: &[(&str, &str)], diag: &mut Diagnostics| -> Option<String> {
        let v = v0.get(k)?.as_str()?;
        match from.iter().find(|(a, _)| *a == v) {
            Some((_, b)) => Some((*b).to_owned()),
            None => {
                let known: Vec<&str> = from.iter().map(|(a, _)| *a).collect();
                diag.warn_at(
                    "vrm.v0-meta",
                    Place::path(format!("{AT}/{k}")),
                    format!("{AT}/{k} is \"{v}\", not one of {}; left at VRM 1.0's most restrictive", known.join(", ")),
                );
                None
            }
        }
    };
    m.avatar_permission = Some(
        enumerated(
            "allowedUserName",
            &[("OnlyAuthor", "onlyAuthor"), ("ExplicitlyLicensedPerson", "onlySeparatelyLicensedPerson"), ("Everyone", "everyone")],
            diag,
        )
        .unwrap_or_else(|| spec::AVATAR_PERMISSION[0].into()),
    );
    let allow = |v: Option<String>| v.map(|v| v == "true");
    m.allow_excessively_violent_usage =
        Some(allow(enumerated("violentUssageName", &[("Allow", "true"), ("Disallow", "false")], diag)).unwrap_or(false));
    m.allow_excessively_sexual_usage =
        Some(allow(enumerated("sexualUssageName", &[("Allow", "true"), ("Disallow", "false")], diag)).unwrap_or(false));
    m.commercial_usage = Some(
        enumerated("commercialUssageName", &[("Allow", "personalProfit"), ("Disallow", "personalNonProfit")], diag)
            .unwrap_or_else(|| spec::COMMERCIAL_USAGE[0].into()),
    );
    m.allow_political_or_religious_usage = Some(false);
    m.allow_redistribution = Some(false);
    m.credit_notation = Some(spec::CREDIT_NOTATION[0].into());
    m.modification = Some(spec::MODIFICATION[0].into());
    m.license_url = Some(spec::LICENSE_URL.into());
    m.other_license_url = match (text("otherLicenseUrl"), text("otherPermissionUrl")) {
        (Some(l), Some(p)) if l == p => Some(l),
        (Some(l), Some(p)) => Some(format!("'{l}', '{p}'")),
        (l, p) => l.or(p),
    };
    if let Some(l) = text("licenseName") {
        diag.loss_at(
            "vrm.v0-license",
            Place::path(format!("{AT}/licenseName")),
            format!(
                "{AT}/licenseName \"{l}\" has no VRM 1.0 field: the 1.0 terms come from the 0.x permissions (user, violent, sexual, commercial use), and redistribution, modification and credit are at their most restrictive, as UniVRM migrates them; set them with --vrm-meta if the licence allows more"
            ),
        );
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_checked_and_unset_terms_are_restrictive() {
        let m = Meta::parse(br#"{"name": "Ann", "authors": ["me"], "commercialUsage": "corporation"}"#, "meta.json").unwrap();
        let mut d = Diagnostics::default();
        let v = m.to_json(&mut d);
        assert_eq!(v["commercialUsage"], "corporation");
        assert_eq!(v["avatarPermission"], "onlyAuthor");
        assert_eq!(v["modification"], "prohibited");
        assert_eq!(v["creditNotation"], "required");
        assert_eq!(v["allowRedistribution"], false);
        assert_eq!(v["licenseUrl"], spec::LICENSE_URL);
        assert!(d.items.iter().any(|i| i.code == "vrm.meta-restrictive" && !i.message.contains("commercialUsage")));
        for (bad, says) in [
            (r#"{"name": "", "authors": ["me"]}"#, "\"name\" must not be empty"),
            (r#"{"name": "a", "authors": []}"#, "\"authors\" must list"),
            (r#"{"name": "a", "authors": ["me"], "modification": "anything"}"#, "\"modification\" is \"anything\""),
            (r#"{"name": "a", "authors": ["me"], "licenceUrl": "x"}"#, "unknown field `licenceUrl`"),
            (r#"{"name": "a", "authors": ["me"], "licenseUrl": "https://example.com/cc0"}"#, "otherLicenseUrl"),
            (r#"{"authors": ["me"]}"#, "missing field `name`"),
        ] {
            let e = Meta::parse(bad.as_bytes(), "meta.json").unwrap_err().to_string();
            assert!(e.starts_with("meta.json: ") && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn v0_meta_migrates_as_univrm_does() {
        let v0 = json!({
            "title": "Alicia", "version": "1.10", "author": "© DWANGO", "contactInformation": "https://example.com/c",
            "reference": "", "texture": 0, "allowedUserName": "Everyone", "violentUssageName": "Disallow",
            "sexualUssageName": "Allow", "commercialUssageName": "Allow", "otherPermissionUrl": "https://example.com/rule",
            "licenseName": "Other", "otherLicenseUrl": "https://example.com/rule"
        });
        let root = json!({ "textures": [{ "source": 3 }] });
        let mut d = Diagnostics::default();
        let m = from_v0(&v0, &root, "file", &mut d);
        assert_eq!(m.name, "Alicia");
        assert_eq!(m.version.as_deref(), Some("1.10"));
        assert_eq!(m.authors, ["© DWANGO"]);
        assert_eq!(m.references, None);
        assert_eq!(m.thumbnail_image, Some(3));
        assert_eq!(m.avatar_permission.as_deref(), Some("everyone"));
        assert_eq!((m.allow_excessively_violent_usage, m.allow_excessively_sexual_usage), (Some(false), Some(true)));
        assert_eq!(m.commercial_usage.as_deref(), Some("personalProfit"));
        assert_eq!(m.other_license_url.as_deref(), Some("https://example.com/rule"));
        assert_eq!((m.modification.as_deref(), m.allow_redistribution), (Some("prohibited"), Some(false)));
        assert!(m.check().is_ok());
        assert!(d.items.iter().any(|i| i.code == "vrm.v0-license" && i.message.contains("\"Other\"")));
        // Two different URLs are both kept; an empty title and author get names, with warnings.
        let v0 = json!({ "title": " ", "otherLicenseUrl": "a", "otherPermissionUrl": "b", "allowedUserName": "Someone" });
        let mut d = Diagnostics::default();
        let m = from_v0(&v0, &json!({}), "file", &mut d);
        assert_eq!(m.name, "file");
        assert_eq!(m.other_license_url.as_deref(), Some("'a', 'b'"));
        assert_eq!(m.avatar_permission.as_deref(), Some("onlyAuthor"));
        assert!(m.check().is_ok());
        assert_eq!(d.items.iter().filter(|i| i.code == "vrm.v0-meta").count(), 3);
    }
}
