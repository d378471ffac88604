//! Conversions behind the `chrono` and `uuid` features.

#[cfg(feature = "chrono")]
#[test]
fn chrono_conversions() {
    use langgraph_codec::typed::pytypes::{Date, DateTime, TimeDelta};
    let fixed = chrono::FixedOffset::east_opt(19800).unwrap();
    let c = chrono::NaiveDate::from_ymd_opt(2024, 6, 1)
        .unwrap()
        .and_hms_micro_opt(12, 0, 0, 5)
        .unwrap()
        .and_local_timezone(fixed)
        .unwrap();
    let ours = DateTime::try_from(c).unwrap();
    // Python: datetime(2024, 6, 1, 12, 0, 0, 5, tzinfo=timezone(timedelta(seconds=19800))).isoformat()
    assert_eq!(ours.to_string(), "2024-06-01T12:00:00.000005+05:30");
    let back = chrono::DateTime::<chrono::FixedOffset>::try_from(ours).unwrap();
    assert_eq!(back, c);
    let naive = DateTime::new(2024, 1, 2, 3, 4, 5, 6).unwrap();
    assert!(chrono::DateTime::<chrono::FixedOffset>::try_from(naive).is_err());
    assert_eq!(
        chrono::NaiveDateTime::from(naive).to_string(),
        "2024-01-02 03:04:05.000006"
    );
    let d = Date::from(chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap());
    assert_eq!(d.to_string(), "2024-02-29");
    let td = TimeDelta::try_from(chrono::TimeDelta::seconds(-1)).unwrap();
    assert_eq!((td.days(), td.seconds(), td.microseconds()), (-1, 86399, 0));
    assert_eq!(
        chrono::TimeDelta::try_from(td).unwrap(),
        chrono::TimeDelta::seconds(-1)
    );
}

#[cfg(feature = "uuid")]
#[test]
fn uuid_conversions() {
    use langgraph_codec::typed::pytypes::Uuid;
    let u = uuid::Uuid::parse_str("12345678-1234-4678-9234-567812345678").unwrap();
    let ours = Uuid::from(u);
    assert_eq!(ours.hex(), "12345678123446789234567812345678");
    assert_eq!(uuid::Uuid::from(ours), u);
}
