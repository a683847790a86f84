//! Tests of the agent's training settings.

use super::*;

#[test]
fn the_shipped_config_loads_and_defaults_validate() {
    // The shipped configs live at the workspace root, two levels above this crate.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/dqn.yaml");
    let c = DqnConfig::load(&path).expect("config/dqn.yaml is valid");
    // The shipped file documents the defaults: it must say exactly what they are.
    assert_eq!(c, DqnConfig::default());
    assert!(DqnConfig::default().validate().is_ok());
    assert_eq!(DqnConfig::default().actions.len(), 5);
}

#[test]
fn the_tuner_configs_load_with_a_joint_grid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    for (file, granularity) in [
        ("dqn-tuner.yaml", Granularity::PerScheduler),
        ("edgetuner.yaml", Granularity::Global),
    ] {
        let c = DqnConfig::load(&dir.join(file)).expect(file);
        let confs = c.configurations();
        assert_eq!(confs.len(), 15, "{file}");
        assert_eq!(confs[1].name(), "closest+reissue@0.8");
        assert_eq!(c.objective, Objective::Tail { weight: 0.1 });
        assert_eq!(c.granularity, granularity);
    }
}

#[test]
fn asets_protocol_config_loads_and_bad_protocol_fields_are_named() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    let p = DqnConfig::load(&dir.join("aset-protocol.yaml")).expect("aset-protocol.yaml");
    assert_eq!(p.lambda_range, [20.0, 100.0]);
    assert_eq!(p.lambda_profile, LambdaProfile::Constant);
    assert_eq!((p.mix_spread, p.theta, p.horizon_s), (0.5, 0.5, 300.0));
    assert_eq!(p.load_view, LoadViewMode::Published);
    let current: DqnConfig = Source::inline("c.yaml", "load_view: current\n")
        .parse()
        .expect("current parses");
    assert_eq!(current.load_view, LoadViewMode::Current);
    for (bad, field) in [
        (
            DqnConfig {
                mix_spread: 1.0,
                ..p.clone()
            },
            "mix_spread",
        ),
        (
            DqnConfig {
                mix_spread: -0.1,
                ..p.clone()
            },
            "mix_spread",
        ),
        (
            DqnConfig {
                theta: 1.5,
                ..p.clone()
            },
            "theta",
        ),
    ] {
        assert_eq!(bad.validate().unwrap_err().0, field);
    }
    // The defaults are not written out, so older checkpoints' headers are unchanged.
    let text = serde_json::to_string(&DqnConfig::default()).unwrap();
    assert!(
        !text.contains("load_view") && !text.contains("mix_spread"),
        "{text}"
    );
}

#[test]
fn the_paper_configs_load_as_their_papers_define_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    let aset = DqnConfig::load(&dir.join("aset.yaml")).expect("aset.yaml");
    // ASET: one output per policy (the seven of its paper: the first seven registered),
    // one action per scheduler, no fallback, trained at λ 60 only.
    assert_eq!(aset.actions, continuum_core::policy::names()[..7]);
    assert_eq!(
        (aset.classes, aset.credit, aset.fallback_levels),
        (ClassMode::Single, Credit::Td, 0)
    );
    assert_eq!(aset.lambda_range, [60.0, 60.0]);
    let paper = DqnConfig::load(&dir.join("edgetuner-paper.yaml")).expect("edgetuner-paper");
    // EdgeTuner: 5 policies × (none + restart and tdp at 0.70, 0.72, …, 0.90).
    assert_eq!(paper.actions.len(), 5 * 23);
    assert!(paper.actions.contains(&"closest+tdp@0.72".to_string()));
    assert_eq!(paper.reward_scope, RewardScope::System);
}

#[test]
fn bad_values_name_their_field() {
    let bad = DqnConfig {
        gamma: 1.5,
        ..DqnConfig::default()
    };
    assert_eq!(bad.validate().unwrap_err().0, "gamma");
    let bad = DqnConfig {
        actions: vec!["nearest".into()],
        ..DqnConfig::default()
    };
    let (f, m) = bad.validate().unwrap_err();
    assert_eq!(f, "actions");
    assert!(m.contains("unknown policy `nearest`"), "{m}");
    let bad = DqnConfig {
        actions: vec!["closest+reissue@1.5".into()],
        ..DqnConfig::default()
    };
    assert_eq!(bad.validate().unwrap_err().0, "actions");
    let bad = DqnConfig {
        objective: Objective::Tail { weight: f64::NAN },
        ..DqnConfig::default()
    };
    assert_eq!(bad.validate().unwrap_err().0, "objective");
    // A tail objective under temporal-difference credit needs the system's window.
    let td_tail = DqnConfig {
        credit: Credit::Td,
        objective: Objective::Tail { weight: 0.1 },
        ..DqnConfig::default()
    };
    let (f, m) = td_tail.validate().unwrap_err();
    assert_eq!(f, "objective");
    assert!(m.contains("reward_scope: system"), "{m}");
    let ok = DqnConfig {
        reward_scope: RewardScope::System,
        ..td_tail
    };
    assert!(ok.validate().is_ok());
    let bad = DqnConfig {
        reward_baseline_rate: 1.0,
        ..DqnConfig::default()
    };
    assert_eq!(bad.validate().unwrap_err().0, "reward_baseline_rate");
    let src = Source::inline("d.yaml", "gama: 0.9\n");
    let e = src.parse::<DqnConfig>().unwrap_err();
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.message.contains("unknown field `gama`"), "{e}");
}

#[test]
fn a_situation_state_needs_demand_classes_and_one_window() {
    use super::{ClassMode, StateKind};
    let ok = DqnConfig {
        state: StateKind::Situation,
        classes: ClassMode::Demand,
        history: 1,
        conv_kernel: 1,
        ..DqnConfig::default()
    };
    assert!(ok.validate().is_ok());
    let two_windows = DqnConfig {
        history: 2,
        ..ok.clone()
    };
    assert_eq!(two_windows.validate().unwrap_err().0, "state");
    let named = DqnConfig {
        classes: ClassMode::PerApp,
        ..ok.clone()
    };
    assert_eq!(named.validate().unwrap_err().0, "state");
    let demand_alone = DqnConfig {
        classes: ClassMode::Demand,
        ..DqnConfig::default()
    };
    assert_eq!(demand_alone.validate().unwrap_err().0, "classes");
    // The default is not written, so older checkpoints' headers stay as they were.
    let text = serde_json::to_string(&DqnConfig::default()).unwrap();
    assert!(!text.contains("\"state\""));
    assert!(
        serde_json::to_string(&ok)
            .unwrap()
            .contains("\"state\":\"situation\"")
    );
}
