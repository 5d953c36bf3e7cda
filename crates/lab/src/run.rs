//! The one run entry point: a scenario (file, overrides, seed) to its result.
//! It alone decides which world runs a scenario; `run`, `sweep`, `reproduce`,
//! `whatif` and Python call it, and none re-decides.

use crate::source::Source;
use serde_json::Value;
use tinygram_proto::Instant;
use tinygram_sim::flows::FlowSim;
use tinygram_sim::metrics::{FlowsResult, RunResult};
use tinygram_sim::world::Sim;
use tinygram_sim::{Scenario, ScenarioError, ScenarioSet, VariantSpec};

/// A prepared simulation of one scenario, in the world its file asks for.
pub enum World {
    /// Two hosts joined by one link per direction (no `[bottleneck]` or `[[flows]]`).
    TwoHost(Box<Sim>),
    /// Named hosts with access links over a shared bottleneck.
    ManyFlow(Box<FlowSim>),
}

impl World {
    /// The world `sc` runs in: many flows when the file has `[bottleneck]`
    /// or `[[flows]]`, else two hosts. The only place this is decided.
    pub fn of(sc: &Scenario) -> World {
        if sc.topology.is_some() {
            World::ManyFlow(Box::new(FlowSim::new(sc)))
        } else {
            World::TwoHost(Box::new(Sim::new(sc)))
        }
    }

    /// Runs to the end; `progress(now, end)` is called as simulated time passes.
    pub fn run(&mut self, progress: &mut dyn FnMut(Instant, Instant)) -> Outcome {
        match self {
            World::TwoHost(sim) => Outcome::TwoHost(Box::new(sim.run(progress))),
            World::ManyFlow(sim) => Outcome::ManyFlow(Box::new(sim.run(progress))),
        }
    }
}

/// The result of one scenario's run, in its world's shape.
#[derive(Clone, Debug)]
pub enum Outcome {
    TwoHost(Box<RunResult>),
    ManyFlow(Box<FlowsResult>),
}

impl Outcome {
    /// Every byte of every connection was delivered once and in order.
    pub fn integrity_ok(&self) -> bool {
        match self {
            Outcome::TwoHost(r) => r.integrity_ok,
            Outcome::ManyFlow(r) => r.integrity_ok,
        }
    }

    /// The result's JSON (the fields of `run --json`).
    pub fn to_json(&self) -> Value {
        match self {
            Outcome::TwoHost(r) => serde_json::to_value(r),
            Outcome::ManyFlow(r) => serde_json::to_value(r),
        }
        .expect("results serialize")
    }
}

/// A scenario file's run: the file as written, then each `[[variant]]`.
#[derive(Clone, Debug)]
pub struct Run {
    pub base: Outcome,
    pub variants: Vec<(String, RunResult)>,
}

impl Run {
    /// `run --json`: the base result, with `variants: [{name, result}]` when
    /// the file has any.
    pub fn to_json(&self) -> Value {
        let mut v = self.base.to_json();
        if !self.variants.is_empty() {
            let list: Vec<Value> = self
                .variants
                .iter()
                .map(|(name, r)| {
                    serde_json::json!({
                        "name": name,
                        "result": serde_json::to_value(r).expect("result serializes"),
                    })
                })
                .collect();
            if let Value::Object(m) = &mut v {
                m.insert("variants".into(), Value::Array(list));
            }
        }
        v
    }

    /// Every run of the file kept every byte intact.
    pub fn integrity_ok(&self) -> bool {
        self.base.integrity_ok() && self.variants.iter().all(|(_, r)| r.integrity_ok)
    }
}

/// Refuses what the many-flow world cannot run yet, naming the file.
pub fn supported(set: &ScenarioSet, origin: &str) -> Result<(), ScenarioError> {
    if set.base.topology.is_some() && !set.variants.is_empty() {
        return Err(ScenarioError {
            file: origin.to_string(),
            line: set.variants.first().map(|(s, _)| s.line),
            key: tinygram_sim::variant::VARIANT_TABLE.to_string(),
            message: "[[variant]] tables are not supported with [[flows]] or [bottleneck] yet; \
                      run each configuration with --set"
                .into(),
            also: Vec::new(),
        });
    }
    Ok(())
}

/// Runs each variant to completion (no capture, no trace), in file order.
pub fn run_variants(variants: &[(VariantSpec, Scenario)]) -> Vec<(String, RunResult)> {
    variants
        .iter()
        .map(|(spec, sc)| (spec.name.clone(), tinygram_sim::run(sc)))
        .collect()
}

/// Runs a validated scenario set: the base in its world, then the variants.
pub fn run_set(
    set: &ScenarioSet,
    origin: &str,
    progress: &mut dyn FnMut(Instant, Instant),
) -> Result<Run, ScenarioError> {
    supported(set, origin)?;
    let base = World::of(&set.base).run(progress);
    Ok(Run {
        base,
        variants: run_variants(&set.variants),
    })
}

/// `tinygram run --json` as a function: the scenario with `overrides`
/// (`KEY=VALUE`, as `--set`) and, when given, `seed`, run to its end with
/// every `[[variant]]`, in the world the file asks for. Deterministic: the
/// same arguments give the same value. A file that leaves values open
/// (`[open]`) runs each of its points: see [`crate::space::run_open`].
pub fn run_json(
    src: &Source,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<Value, ScenarioError> {
    let space = crate::space::Space::of_source(src, &[])?;
    if !space.is_empty() {
        return crate::space::run_open(src, &space, overrides, seed).map(|o| o.to_json());
    }
    run_point(src, overrides, seed)
}

/// One run of the scenario with every value fixed: no `[open]` expansion.
pub fn run_point(
    src: &Source,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<Value, ScenarioError> {
    let set = src.set(overrides, seed)?;
    Ok(run_set(&set, &src.origin, &mut |_, _| {})?.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "duration = \"2s\"\n[workload]\nrequests = 3\n";
    const DUMBBELL: &str = "duration = \"2s\"\n[bottleneck]\nrate = \"10Mbps\"\n\
        [workload]\nrequests = 2\n[[flows]]\ncount = 3\n";

    #[test]
    fn run_json_is_a_pure_function_of_its_arguments() {
        let src = Source::text(SMALL);
        let a = run_json(&src, &["client.send_policy=nodelay".into()], Some(7)).unwrap();
        let b = run_json(&src, &["client.send_policy=nodelay".into()], Some(7)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a["seed"], 7);
        assert_eq!(a["transactions"], 3);
        let other = run_json(&src, &[], Some(8)).unwrap();
        assert_eq!(other["seed"], 8);
    }

    #[test]
    fn a_many_flow_file_runs_many_flows() {
        let v = run_json(&Source::text(DUMBBELL), &[], None).unwrap();
        assert_eq!(v["flow_count"], 3, "{v}");
        assert_eq!(v["transactions"], 6);
        assert!(v.get("client").is_none(), "not a two-host result: {v}");
        assert!(v["queues"].as_array().is_some_and(|q| !q.is_empty()));
    }

    #[test]
    fn variants_of_a_many_flow_file_are_refused_by_name() {
        let text = format!("{DUMBBELL}[[variant]]\nname = \"x\"\nseed = 2\n");
        let e = run_json(&Source::text(&text), &[], None).unwrap_err();
        assert_eq!(e.key, "variant", "{e}");
        assert!(e.message.contains("not supported"), "{e}");
    }

    #[test]
    fn a_bad_override_names_its_key() {
        let e = run_json(
            &Source::text(SMALL),
            &["client.sendpolicy=nagle".into()],
            None,
        )
        .unwrap_err();
        assert_eq!(e.key, "client.sendpolicy", "{e}");
    }

    #[test]
    fn a_json_scenario_reads_like_its_toml() {
        let v = serde_json::json!({"duration": "2s", "workload": {"requests": 3}});
        let from_json = run_json(&Source::json(&v).unwrap(), &[], None).unwrap();
        let from_text = run_json(&Source::text(SMALL), &[], None).unwrap();
        assert_eq!(from_json, from_text);
        let e = Source::json(&serde_json::json!({"link": {"rate": null}})).unwrap_err();
        assert_eq!(e.key, "link.rate");
        assert!(Source::json(&serde_json::json!([1])).is_err());
    }
}
