//! The column declarations against docs/output-schema.md, and the writer's check against them.

use placesim_metrics::schema::{self, ColumnDef};
use polars::prelude::{Column, DataFrame};

/// The rows of the table under `heading`: names (a row may list several), type, unit and
/// meaning, as written (`\|` unescaped).
fn documented(doc: &str, heading: &str) -> Vec<(Vec<String>, String, String, String)> {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}`"));
    let rest = &doc[start + heading.len()..];
    let section = rest.find("\n## ").map_or(rest, |end| &rest[..end]);
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<String> = line
                .replace("\\|", "\u{1}")
                .split('|')
                .map(|c| c.trim().replace('\u{1}', "|"))
                .collect();
            let names = cells[1]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
            (names, cells[2].clone(), cells[3].clone(), cells[4].clone())
        })
        .collect()
}

/// Each table of the docs names exactly the declared columns, in file order, with the
/// declared type, unit and meaning; rows that say "as in jobs.parquet" name jobs.parquet's.
#[test]
fn docs_list_exactly_the_declared_columns() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/output-schema.md"
    ))
    .expect("docs/output-schema.md");
    let summary_defs: Vec<ColumnDef> = schema::summary::ALL.iter().map(|c| c.def).collect();
    for (heading, declared) in [
        ("## jobs.parquet", schema::jobs::ALL),
        ("## summary.parquet", &summary_defs),
        ("## timeseries.parquet", schema::timeseries::ALL),
        ("## events.parquet", schema::events::ALL),
        ("## vnodes.parquet", schema::vnodes::ALL),
        ("## reservations.parquet", schema::reservations::ALL),
        ("## waits.parquet", schema::waits::ALL),
        ("## agreement.parquet", schema::agreement::ALL),
    ] {
        let rows = documented(&doc, heading);
        let names: Vec<&str> = rows
            .iter()
            .flat_map(|r| r.0.iter().map(String::as_str))
            .collect();
        let want: Vec<&str> = declared.iter().map(|c| c.name).collect();
        assert_eq!(names, want, "{heading}: documented columns");
        for (row_names, dtype, unit, meaning) in &rows {
            for name in row_names {
                let def: &ColumnDef = declared.iter().find(|c| c.name == name).unwrap();
                if meaning == "as in jobs.parquet" {
                    let jobs = schema::jobs::ALL.iter().find(|c| c.name == name);
                    assert_eq!(jobs, Some(def), "{heading}: `{name}`");
                } else {
                    assert_eq!(
                        (def.dtype, def.unit, def.meaning),
                        (dtype.as_str(), unit.as_str(), meaning.as_str()),
                        "{heading}: `{name}`"
                    );
                }
            }
        }
    }
}

/// Every declared type is one the writer knows.
#[test]
fn every_declared_type_maps_to_a_parquet_type() {
    let summary = schema::summary::ALL.iter().map(|c| &c.def);
    for def in schema::jobs::ALL
        .iter()
        .chain(summary)
        .chain(schema::timeseries::ALL)
    {
        assert!(def.data_type().is_some(), "`{}`: {}", def.name, def.dtype);
    }
}

/// A frame that strays from the declaration is refused before it is written.
#[test]
fn a_frame_off_its_declaration_is_refused() {
    let table = &schema::timeseries::ALL[..4];
    let frame = |time: Column| {
        DataFrame::new(
            1,
            vec![
                Column::new("scenario".into(), ["s"]),
                Column::new("policy".into(), ["p"]),
                Column::new("seed".into(), [1u64]),
                time,
            ],
        )
        .unwrap()
    };
    assert!(schema::conform(table, frame(Column::new("time_s".into(), [0u64]))).is_ok());
    let renamed = schema::conform(table, frame(Column::new("t".into(), [0u64])));
    assert_eq!(
        renamed.unwrap_err().to_string(),
        "columns [\"scenario\", \"policy\", \"seed\", \"t\"] differ from the declared [\"scenario\", \"policy\", \"seed\", \"time_s\"]"
    );
    let retyped = schema::conform(table, frame(Column::new("time_s".into(), [0.5f64])));
    assert_eq!(
        retyped.unwrap_err().to_string(),
        "column `time_s` is f64, declared u64"
    );
}
