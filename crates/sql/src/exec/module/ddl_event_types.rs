//! SQL Server's DDL event types and event groups (`sys.trigger_event_types`): what a DDL
//! trigger's `FOR` list names, and the hierarchy that makes a group cover the events under
//! it (`DDL_TABLE_VIEW_EVENTS` covers `DDL_TABLE_EVENTS`, which covers `CREATE_TABLE`).
//!
//! The whole tree is here, the server-level branch too, so that a name SQL Server knows but
//! Walden never raises (`CREATE_ASSEMBLY`) is accepted, and a server-level name on a
//! database trigger is refused with SQL Server's 1098 rather than 1084.

/// The type of `DDL_DATABASE_LEVEL_EVENTS`: every event a database trigger may name is under
/// it.
const DATABASE_LEVEL: u16 = 10016;

/// `(type, parent_type, type_name)` as `sys.trigger_event_types` lists them; parent 0 stands
/// for NULL (a root). Types from 10000 up are groups, the others single events.
pub(crate) const EVENT_TYPES: &[(u16, u16, &str)] = &[
    (296, 0, "ALTER_SERVER_CONFIGURATION"),
    (10001, 0, "DDL_EVENTS"),
    (10016, 10001, "DDL_DATABASE_LEVEL_EVENTS"),
    (10027, 10016, "DDL_ASSEMBLY_EVENTS"),
    (102, 10027, "ALTER_ASSEMBLY"),
    (101, 10027, "CREATE_ASSEMBLY"),
    (103, 10027, "DROP_ASSEMBLY"),
    (10029, 10016, "DDL_DATABASE_SECURITY_EVENTS"),
    (10033, 10029, "DDL_APPLICATION_ROLE_EVENTS"),
    (138, 10033, "ALTER_APPLICATION_ROLE"),
    (137, 10033, "CREATE_APPLICATION_ROLE"),
    (139, 10033, "DROP_APPLICATION_ROLE"),
    (10038, 10029, "DDL_ASYMMETRIC_KEY_EVENTS"),
    (248, 10038, "ALTER_ASYMMETRIC_KEY"),
    (247, 10038, "CREATE_ASYMMETRIC_KEY"),
    (249, 10038, "DROP_ASYMMETRIC_KEY"),
    (10036, 10029, "DDL_AUTHORIZATION_DATABASE_EVENTS"),
    (205, 10036, "ALTER_AUTHORIZATION_DATABASE"),
    (10030, 10029, "DDL_CERTIFICATE_EVENTS"),
    (198, 10030, "ALTER_CERTIFICATE"),
    (197, 10030, "CREATE_CERTIFICATE"),
    (199, 10030, "DROP_CERTIFICATE"),
    (10039, 10029, "DDL_CRYPTO_SIGNATURE_EVENTS"),
    (257, 10039, "ADD_SIGNATURE"),
    (255, 10039, "ADD_SIGNATURE_SCHEMA_OBJECT"),
    (258, 10039, "DROP_SIGNATURE"),
    (256, 10039, "DROP_SIGNATURE_SCHEMA_OBJECT"),
    (10066, 10029, "DDL_DATABASE_AUDIT_SPECIFICATION_EVENTS"),
    (291, 10066, "ALTER_DATABASE_AUDIT_SPECIFICATION"),
    (290, 10066, "CREATE_DATABASE_AUDIT_SPECIFICATION"),
    (292, 10066, "DROP_DATABASE_AUDIT_SPECIFICATION"),
    (10062, 10029, "DDL_DATABASE_ENCRYPTION_KEY_EVENTS"),
    (279, 10062, "ALTER_DATABASE_ENCRYPTION_KEY"),
    (278, 10062, "CREATE_DATABASE_ENCRYPTION_KEY"),
    (280, 10062, "DROP_DATABASE_ENCRYPTION_KEY"),
    (10035, 10029, "DDL_GDR_DATABASE_EVENTS"),
    (171, 10035, "DENY_DATABASE"),
    (170, 10035, "GRANT_DATABASE"),
    (172, 10035, "REVOKE_DATABASE"),
    (10040, 10029, "DDL_MASTER_KEY_EVENTS"),
    (253, 10040, "ALTER_MASTER_KEY"),
    (252, 10040, "CREATE_MASTER_KEY"),
    (254, 10040, "DROP_MASTER_KEY"),
    (10032, 10029, "DDL_ROLE_EVENTS"),
    (207, 10032, "ADD_ROLE_MEMBER"),
    (135, 10032, "ALTER_ROLE"),
    (134, 10032, "CREATE_ROLE"),
    (136, 10032, "DROP_ROLE"),
    (208, 10032, "DROP_ROLE_MEMBER"),
    (10034, 10029, "DDL_SCHEMA_EVENTS"),
    (142, 10034, "ALTER_SCHEMA"),
    (141, 10034, "CREATE_SCHEMA"),
    (143, 10034, "DROP_SCHEMA"),
    (10037, 10029, "DDL_SYMMETRIC_KEY_EVENTS"),
    (245, 10037, "ALTER_SYMMETRIC_KEY"),
    (244, 10037, "CREATE_SYMMETRIC_KEY"),
    (246, 10037, "DROP_SYMMETRIC_KEY"),
    (10031, 10029, "DDL_USER_EVENTS"),
    (132, 10031, "ALTER_USER"),
    (131, 10031, "CREATE_USER"),
    (133, 10031, "DROP_USER"),
    (10052, 10016, "DDL_DEFAULT_EVENTS"),
    (218, 10052, "BIND_DEFAULT"),
    (220, 10052, "CREATE_DEFAULT"),
    (231, 10052, "DROP_DEFAULT"),
    (242, 10052, "UNBIND_DEFAULT"),
    (10026, 10016, "DDL_EVENT_NOTIFICATION_EVENTS"),
    (74, 10026, "CREATE_EVENT_NOTIFICATION"),
    (76, 10026, "DROP_EVENT_NOTIFICATION"),
    (10053, 10016, "DDL_EXTENDED_PROPERTY_EVENTS"),
    (211, 10053, "ALTER_EXTENDED_PROPERTY"),
    (222, 10053, "CREATE_EXTENDED_PROPERTY"),
    (233, 10053, "DROP_EXTENDED_PROPERTY"),
    (10054, 10016, "DDL_FULLTEXT_CATALOG_EVENTS"),
    (212, 10054, "ALTER_FULLTEXT_CATALOG"),
    (223, 10054, "CREATE_FULLTEXT_CATALOG"),
    (234, 10054, "DROP_FULLTEXT_CATALOG"),
    (10067, 10016, "DDL_FULLTEXT_STOPLIST_EVENTS"),
    (294, 10067, "ALTER_FULLTEXT_STOPLIST"),
    (293, 10067, "CREATE_FULLTEXT_STOPLIST"),
    (295, 10067, "DROP_FULLTEXT_STOPLIST"),
    (10023, 10016, "DDL_FUNCTION_EVENTS"),
    (62, 10023, "ALTER_FUNCTION"),
    (61, 10023, "CREATE_FUNCTION"),
    (63, 10023, "DROP_FUNCTION"),
    (10049, 10016, "DDL_PARTITION_EVENTS"),
    (10050, 10049, "DDL_PARTITION_FUNCTION_EVENTS"),
    (192, 10050, "ALTER_PARTITION_FUNCTION"),
    (191, 10050, "CREATE_PARTITION_FUNCTION"),
    (193, 10050, "DROP_PARTITION_FUNCTION"),
    (10051, 10049, "DDL_PARTITION_SCHEME_EVENTS"),
    (195, 10051, "ALTER_PARTITION_SCHEME"),
    (194, 10051, "CREATE_PARTITION_SCHEME"),
    (196, 10051, "DROP_PARTITION_SCHEME"),
    (10055, 10016, "DDL_PLAN_GUIDE_EVENTS"),
    (216, 10055, "ALTER_PLAN_GUIDE"),
    (228, 10055, "CREATE_PLAN_GUIDE"),
    (238, 10055, "DROP_PLAN_GUIDE"),
    (10024, 10016, "DDL_PROCEDURE_EVENTS"),
    (52, 10024, "ALTER_PROCEDURE"),
    (51, 10024, "CREATE_PROCEDURE"),
    (53, 10024, "DROP_PROCEDURE"),
    (10056, 10016, "DDL_RULE_EVENTS"),
    (219, 10056, "BIND_RULE"),
    (229, 10056, "CREATE_RULE"),
    (239, 10056, "DROP_RULE"),
    (243, 10056, "UNBIND_RULE"),
    (10069, 10016, "DDL_SEARCH_PROPERTY_LIST_EVENTS"),
    (298, 10069, "ALTER_SEARCH_PROPERTY_LIST"),
    (297, 10069, "CREATE_SEARCH_PROPERTY_LIST"),
    (299, 10069, "DROP_SEARCH_PROPERTY_LIST"),
    (10070, 10016, "DDL_SEQUENCE_EVENTS"),
    (304, 10070, "ALTER_SEQUENCE"),
    (303, 10070, "CREATE_SEQUENCE"),
    (305, 10070, "DROP_SEQUENCE"),
    (10041, 10016, "DDL_SSB_EVENTS"),
    (10063, 10041, "DDL_BROKER_PRIORITY_EVENTS"),
    (282, 10063, "ALTER_BROKER_PRIORITY"),
    (281, 10063, "CREATE_BROKER_PRIORITY"),
    (283, 10063, "DROP_BROKER_PRIORITY"),
    (10043, 10041, "DDL_CONTRACT_EVENTS"),
    (154, 10043, "CREATE_CONTRACT"),
    (156, 10043, "DROP_CONTRACT"),
    (10042, 10041, "DDL_MESSAGE_TYPE_EVENTS"),
    (152, 10042, "ALTER_MESSAGE_TYPE"),
    (151, 10042, "CREATE_MESSAGE_TYPE"),
    (153, 10042, "DROP_MESSAGE_TYPE"),
    (10044, 10041, "DDL_QUEUE_EVENTS"),
    (158, 10044, "ALTER_QUEUE"),
    (157, 10044, "CREATE_QUEUE"),
    (159, 10044, "DROP_QUEUE"),
    (10047, 10041, "DDL_REMOTE_SERVICE_BINDING_EVENTS"),
    (175, 10047, "ALTER_REMOTE_SERVICE_BINDING"),
    (174, 10047, "CREATE_REMOTE_SERVICE_BINDING"),
    (176, 10047, "DROP_REMOTE_SERVICE_BINDING"),
    (10046, 10041, "DDL_ROUTE_EVENTS"),
    (165, 10046, "ALTER_ROUTE"),
    (164, 10046, "CREATE_ROUTE"),
    (166, 10046, "DROP_ROUTE"),
    (10045, 10041, "DDL_SERVICE_EVENTS"),
    (162, 10045, "ALTER_SERVICE"),
    (161, 10045, "CREATE_SERVICE"),
    (163, 10045, "DROP_SERVICE"),
    (10022, 10016, "DDL_SYNONYM_EVENTS"),
    (34, 10022, "CREATE_SYNONYM"),
    (36, 10022, "DROP_SYNONYM"),
    (10017, 10016, "DDL_TABLE_VIEW_EVENTS"),
    (10020, 10017, "DDL_INDEX_EVENTS"),
    (213, 10020, "ALTER_FULLTEXT_INDEX"),
    (25, 10020, "ALTER_INDEX"),
    (224, 10020, "CREATE_FULLTEXT_INDEX"),
    (24, 10020, "CREATE_INDEX"),
    (274, 10020, "CREATE_SPATIAL_INDEX"),
    (206, 10020, "CREATE_XML_INDEX"),
    (235, 10020, "DROP_FULLTEXT_INDEX"),
    (26, 10020, "DROP_INDEX"),
    (10021, 10017, "DDL_STATISTICS_EVENTS"),
    (27, 10021, "CREATE_STATISTICS"),
    (29, 10021, "DROP_STATISTICS"),
    (28, 10021, "UPDATE_STATISTICS"),
    (10018, 10017, "DDL_TABLE_EVENTS"),
    (22, 10018, "ALTER_TABLE"),
    (21, 10018, "CREATE_TABLE"),
    (23, 10018, "DROP_TABLE"),
    (10019, 10017, "DDL_VIEW_EVENTS"),
    (42, 10019, "ALTER_VIEW"),
    (41, 10019, "CREATE_VIEW"),
    (43, 10019, "DROP_VIEW"),
    (10025, 10016, "DDL_TRIGGER_EVENTS"),
    (72, 10025, "ALTER_TRIGGER"),
    (71, 10025, "CREATE_TRIGGER"),
    (73, 10025, "DROP_TRIGGER"),
    (10028, 10016, "DDL_TYPE_EVENTS"),
    (91, 10028, "CREATE_TYPE"),
    (93, 10028, "DROP_TYPE"),
    (10048, 10016, "DDL_XML_SCHEMA_COLLECTION_EVENTS"),
    (178, 10048, "ALTER_XML_SCHEMA_COLLECTION"),
    (177, 10048, "CREATE_XML_SCHEMA_COLLECTION"),
    (179, 10048, "DROP_XML_SCHEMA_COLLECTION"),
    (241, 10016, "RENAME"),
    (10002, 10001, "DDL_SERVER_LEVEL_EVENTS"),
    (214, 10002, "ALTER_INSTANCE"),
    (10071, 10002, "DDL_AVAILABILITY_GROUP_EVENTS"),
    (307, 10071, "ALTER_AVAILABILITY_GROUP"),
    (306, 10071, "CREATE_AVAILABILITY_GROUP"),
    (308, 10071, "DROP_AVAILABILITY_GROUP"),
    (10004, 10002, "DDL_DATABASE_EVENTS"),
    (202, 10004, "ALTER_DATABASE"),
    (201, 10004, "CREATE_DATABASE"),
    (203, 10004, "DROP_DATABASE"),
    (10003, 10002, "DDL_ENDPOINT_EVENTS"),
    (182, 10003, "ALTER_ENDPOINT"),
    (181, 10003, "CREATE_ENDPOINT"),
    (183, 10003, "DROP_ENDPOINT"),
    (10057, 10002, "DDL_EVENT_SESSION_EVENTS"),
    (265, 10057, "ALTER_EVENT_SESSION"),
    (264, 10057, "CREATE_EVENT_SESSION"),
    (266, 10057, "DROP_EVENT_SESSION"),
    (10011, 10002, "DDL_EXTENDED_PROCEDURE_EVENTS"),
    (221, 10011, "CREATE_EXTENDED_PROCEDURE"),
    (232, 10011, "DROP_EXTENDED_PROCEDURE"),
    (10012, 10002, "DDL_LINKED_SERVER_EVENTS"),
    (263, 10012, "ALTER_LINKED_SERVER"),
    (225, 10012, "CREATE_LINKED_SERVER"),
    (10013, 10012, "DDL_LINKED_SERVER_LOGIN_EVENTS"),
    (226, 10013, "CREATE_LINKED_SERVER_LOGIN"),
    (236, 10013, "DROP_LINKED_SERVER_LOGIN"),
    (262, 10012, "DROP_LINKED_SERVER"),
    (10014, 10002, "DDL_MESSAGE_EVENTS"),
    (215, 10014, "ALTER_MESSAGE"),
    (227, 10014, "CREATE_MESSAGE"),
    (237, 10014, "DROP_MESSAGE"),
    (10015, 10002, "DDL_REMOTE_SERVER_EVENTS"),
    (217, 10015, "ALTER_REMOTE_SERVER"),
    (230, 10015, "CREATE_REMOTE_SERVER"),
    (240, 10015, "DROP_REMOTE_SERVER"),
    (10058, 10002, "DDL_RESOURCE_GOVERNOR_EVENTS"),
    (273, 10058, "ALTER_RESOURCE_GOVERNOR_CONFIG"),
    (10059, 10058, "DDL_RESOURCE_POOL"),
    (268, 10059, "ALTER_RESOURCE_POOL"),
    (267, 10059, "CREATE_RESOURCE_POOL"),
    (269, 10059, "DROP_RESOURCE_POOL"),
    (10060, 10058, "DDL_WORKLOAD_GROUP"),
    (271, 10060, "ALTER_WORKLOAD_GROUP"),
    (270, 10060, "CREATE_WORKLOAD_GROUP"),
    (272, 10060, "DROP_WORKLOAD_GROUP"),
    (10005, 10002, "DDL_SERVER_SECURITY_EVENTS"),
    (209, 10005, "ADD_SERVER_ROLE_MEMBER"),
    (301, 10005, "ALTER_SERVER_ROLE"),
    (300, 10005, "CREATE_SERVER_ROLE"),
    (10008, 10005, "DDL_AUTHORIZATION_SERVER_EVENTS"),
    (204, 10008, "ALTER_AUTHORIZATION_SERVER"),
    (10009, 10005, "DDL_CREDENTIAL_EVENTS"),
    (260, 10009, "ALTER_CREDENTIAL"),
    (259, 10009, "CREATE_CREDENTIAL"),
    (261, 10009, "DROP_CREDENTIAL"),
    (10061, 10005, "DDL_CRYPTOGRAPHIC_PROVIDER_EVENTS"),
    (276, 10061, "ALTER_CRYPTOGRAPHIC_PROVIDER"),
    (275, 10061, "CREATE_CRYPTOGRAPHIC_PROVIDER"),
    (277, 10061, "DROP_CRYPTOGRAPHIC_PROVIDER"),
    (10007, 10005, "DDL_GDR_SERVER_EVENTS"),
    (168, 10007, "DENY_SERVER"),
    (167, 10007, "GRANT_SERVER"),
    (169, 10007, "REVOKE_SERVER"),
    (10006, 10005, "DDL_LOGIN_EVENTS"),
    (145, 10006, "ALTER_LOGIN"),
    (144, 10006, "CREATE_LOGIN"),
    (146, 10006, "DROP_LOGIN"),
    (10064, 10005, "DDL_SERVER_AUDIT_EVENTS"),
    (285, 10064, "ALTER_SERVER_AUDIT"),
    (284, 10064, "CREATE_SERVER_AUDIT"),
    (286, 10064, "DROP_SERVER_AUDIT"),
    (10065, 10005, "DDL_SERVER_AUDIT_SPECIFICATION_EVENTS"),
    (288, 10065, "ALTER_SERVER_AUDIT_SPECIFICATION"),
    (287, 10065, "CREATE_SERVER_AUDIT_SPECIFICATION"),
    (289, 10065, "DROP_SERVER_AUDIT_SPECIFICATION"),
    (10010, 10005, "DDL_SERVICE_MASTER_KEY_EVENTS"),
    (251, 10010, "ALTER_SERVICE_MASTER_KEY"),
    (302, 10005, "DROP_SERVER_ROLE"),
    (210, 10005, "DROP_SERVER_ROLE_MEMBER"),
];

/// An event type or group: its number and its name.
pub(crate) type EventType = (u16, &'static str);

/// The entry named `name` (case-insensitive).
pub(crate) fn find(name: &str) -> Option<(u16, u16, &'static str)> {
    EVENT_TYPES.iter().copied().find(|(_, _, n)| n.eq_ignore_ascii_case(name))
}

/// The parent of type `ty`, if it has one.
fn parent(ty: u16) -> Option<u16> {
    EVENT_TYPES.iter().find(|(t, _, _)| *t == ty).map(|(_, p, _)| *p).filter(|p| *p != 0)
}

/// Whether `named` (an event type or group) covers the event type `event`: it is the event,
/// or one of the groups above it.
pub(crate) fn covers(named: u16, event: u16) -> bool {
    let mut at = Some(event);
    while let Some(ty) = at {
        if ty == named {
            return true;
        }
        at = parent(ty);
    }
    false
}

/// Whether `ty` may be named by a DDL trigger `ON DATABASE`: it is under
/// `DDL_DATABASE_LEVEL_EVENTS` (or is that group).
pub(crate) fn is_database_level(ty: u16) -> bool {
    covers(DATABASE_LEVEL, ty)
}

/// The single events (not groups) that `named` covers, in table order: what
/// `sys.trigger_events` lists for a trigger that names a group.
pub(crate) fn events_under(named: u16) -> impl Iterator<Item = EventType> {
    EVENT_TYPES
        .iter()
        .filter(move |(t, _, _)| *t < 10000 && covers(named, *t))
        .map(|(t, _, n)| (*t, *n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_cover_the_events_under_them_and_nothing_else() {
        let ty = |name| find(name).unwrap().0;
        assert!(covers(ty("DDL_TABLE_EVENTS"), ty("CREATE_TABLE")));
        assert!(covers(ty("DDL_TABLE_VIEW_EVENTS"), ty("DROP_INDEX")));
        assert!(covers(ty("DDL_DATABASE_LEVEL_EVENTS"), ty("CREATE_SCHEMA")));
        assert!(covers(ty("DDL_EVENTS"), ty("RENAME")));
        assert!(covers(ty("ALTER_VIEW"), ty("ALTER_VIEW")));
        assert!(!covers(ty("DDL_TABLE_EVENTS"), ty("CREATE_VIEW")));
        assert!(!covers(ty("DDL_PROCEDURE_EVENTS"), ty("CREATE_FUNCTION")));
        assert!(is_database_level(ty("create_trigger")));
        assert!(!is_database_level(ty("CREATE_DATABASE")));
        assert!(!is_database_level(ty("DDL_EVENTS")));
        let table: Vec<_> = events_under(ty("DDL_TABLE_EVENTS")).map(|(_, n)| n).collect();
        assert_eq!(table, ["ALTER_TABLE", "CREATE_TABLE", "DROP_TABLE"]);
        assert!(find("CREATE_NOTHING").is_none());
    }

    #[test]
    fn every_parent_is_a_group_in_the_table() {
        for (ty, parent, name) in EVENT_TYPES {
            if *parent != 0 {
                assert!(*parent >= 10000, "{name}");
                assert!(EVENT_TYPES.iter().any(|(t, _, _)| t == parent), "{name}");
            }
            assert_eq!(EVENT_TYPES.iter().filter(|(t, _, _)| t == ty).count(), 1, "{name}");
        }
    }
}
