# Writes docs/output.schema.json (the JSON contract of podsim's outputs, README "JSON output"); edit here and rerun.
import json
def obj(props, required=None, desc=None):
    o={"type":"object","properties":props,"required":sorted(props.keys()) if required is None else required,"additionalProperties":False}
    if desc: o["description"]=desc
    return o
def num(d=None, null=False, minimum=None):
    o={"type":["number","null"] if null else "number"}
    if minimum is not None: o["minimum"]=minimum
    if d: o["description"]=d
    return o
def integer(d=None, minimum=None):
    o={"type":"integer"}
    if minimum is not None: o["minimum"]=minimum
    if d: o["description"]=d
    return o
def string(d=None, null=False, enum=None):
    o={"type":["string","null"] if null else "string"}
    if enum: o["enum"]=enum+([None] if null else [])
    if d: o["description"]=d
    return o
def boolean(d=None, null=False):
    o={"type":["boolean","null"] if null else "boolean"}
    if d: o["description"]=d
    return o
def ref(n, null=False, d=None):
    o={"$ref":"#/$defs/"+n}
    if null: o={"oneOf":[{"$ref":"#/$defs/"+n},{"type":"null"}]}
    if d: o["description"]=d
    return o
def arr(items, d=None):
    o={"type":"array","items":items}
    if d: o["description"]=d
    return o
def head(cmd):
    return {"schema_version":{"const":2,"description":"version of this contract (docs/output.schema.json)"},
            "command":{"const":cmd,"description":"the podsim command that wrote this output"}}
PRICE=["on-demand","spot","1y","3y"]
defs={}
defs["file_ref"]=obj({"name":string("name given in the file"),"file":string("path as given on the command line")})
defs["system"]=obj({"label":string("system label, e.g. v4-2048 or 16 x a3-megagpu-8g"),"chip":string("chip id in hardware/chips"),"chips":integer("accelerator chips",1)})
defs["plan"]=obj({
 "dp":integer("data-parallel replicas (the ZeRO/FSDP group included)",1),"tp":integer("tensor parallel",1),"pp":integer("pipeline stages",1),
 "vpp":integer("model chunks per stage (interleaved 1F1B when > 1)",1),"cp":integer("context parallel",1),"ep":integer("expert parallel",1),
 "etp":integer("expert tensor parallel",1),"sp":boolean("sequence parallelism over the TP group"),"zero":{"type":"integer","enum":[0,1,2,3],"description":"ZeRO stage (3: FSDP)"},
 "schedule":string("pipeline schedule"),"micro_batch":integer("sequences per micro-batch per replica",1),
 "global_batch_seqs":integer("sequences per optimizer step",1),"micro_batches":integer("micro-batches per step per replica",0),
 "precision":string("GEMM precision"),"fp8_recipe":string("fp8 scaling recipe; null unless precision is fp8",null=True),
 "recompute":string("activation recomputation"),"attention":string("attention kernel"),"tp_comm_overlap":string("TP communication overlap")})
defs["breakdown_s"]=obj({"compute":num("kernels on the critical stage, s",minimum=0),"exposed_communication":num("communication not hidden under compute, s",minimum=0),
 "pipeline_bubble":num("pipeline fill, drain and waits, s",minimum=0),"optimizer":num("optimizer step, s",minimum=0),"input_wait":num("the step waiting for its input pipeline, s",minimum=0)},desc="where the step time goes; the parts sum to step_time_s")
defs["memory_per_device_bytes"]=obj({k:num(minimum=0) for k in ["weights","master_weights","gradients","optimizer_states","activations","transient","workspace","total","hbm"]}|{"fits":boolean("total <= hbm")},desc="per device, bytes")
defs["networks"]=arr(obj({"group":string("parallel group: tp, cp, dp, pp, ep"),"size":integer(minimum=1),"path":string("links the group uses"),"algorithm":string("collective algorithm"),"in_one_nvlink_domain":boolean()}),"where each parallel group sits")
defs["option_cost"]=obj({"price_option":string(enum=PRICE),"offered":boolean("false: the seller does not offer this option"),
 "usd_per_hour":num("whole system",null=True),"usd_total":num("token budget, no failures",null=True),"usd_total_with_failures":num(null=True),
 "usd_per_million_tokens":num(null=True),"usd_outlay":num("what choosing this option costs the buyer: whole commitment terms, else the run with failures",null=True),
 "effective_time_s":num("wall time with failures at this option's goodput",null=True),
 "commitment":{"oneOf":[obj({"term_hours":num(minimum=0),"terms":integer(minimum=0),"usd":num("the whole terms",null=True),"run_share":num("share of the terms the run uses",minimum=0)}),{"type":"null"}]}})
defs["ranked_plan"]=obj({"system":ref("system"),"plan":ref("plan"),"step_time_s":num(minimum=0),"screened_step_time_s":num("closed form",minimum=0),
 "simgrid_step_time_s":num("SimGrid refinement (--refine), else null",null=True),"equivalent_plans":arr(string(),"plans with the very same step time and memory"),
 "breakdown_s":ref("breakdown_s"),"tokens_per_s":num(minimum=0),"mfu":num(minimum=0),"mfu_causal_halved":num(minimum=0),"hfu":num(minimum=0),
 "memory_per_device_bytes":ref("memory_per_device_bytes"),"networks":ref("networks"),"time_to_train_s":num("token budget's wall time, null without a budget",null=True),
 "cost":ref("option_cost",null=True,d="dollars at the search's price option; null without a price")})
goodput=obj({"checkpoint_bytes":num(minimum=0),"checkpoint_write_s":num(minimum=0),"checkpoint_blocking_s":num("training paused per checkpoint",minimum=0),"restore_s":num(minimum=0),"checkpoint_storage":string("where checkpoints go and the binding limit"),"async_checkpoint":boolean(),"mtbf_s":num(minimum=0),"checkpoint_interval_s":num(minimum=0),"goodput":num(minimum=0),"effective_time_s":num(minimum=0)})
cost_props={"token_budget":num(minimum=0),"time_to_train_s":num(minimum=0),"chip_hours":num(minimum=0),"goodput":goodput,"goodput_spot":goodput,
 "reliability_source":string(),"no_price_reason":string(null=True),
 "price":{"oneOf":[obj({"sku":string(),"region":string(),"unit":string(),"source":string(),"source_date":string()}),{"type":"null"}]},
 "options":arr(ref("option_cost")), "recovery":arr(obj({"id":string(enum=["restart","wait","spares","in-memory","elastic"]),"name":string(),"applicable":boolean(),"why_not":string(null=True),"goodput":num(null=True),"effective_time_s":num(null=True),"downtime_per_failure_s":num(minimum=0),"lost_work_per_failure_s":num(minimum=0),"checkpoint_pause_s":num(minimum=0),"checkpoint_interval_s":num(minimum=0),"spare_hosts":num(minimum=0),"usd_on_demand_with_failures":num(null=True)}),"goodput and dollars per recovery strategy"),
 "train_steps_time_s":num(minimum=0),"evaluations":integer(minimum=0),"eval_time_s":num(minimum=0),"eval_share_of_wall_time":num(minimum=0)}
cost_req=sorted(k for k in cost_props if k not in ["train_steps_time_s","evaluations","eval_time_s","eval_share_of_wall_time"])
run_props=head("run")|{"scenario":ref("file_ref"),"model":obj({"name":string(),"params":num(minimum=0),"layers":integer(minimum=1)}),
 "system":ref("system"),"plan":ref("plan"),"plan_choices":arr(string(),"plan fields podsim chose (partial plans), with values"),
 "software_stack":string(),"feasible":boolean(),"infeasible_reasons":arr(string()),"memory_per_device_bytes":ref("memory_per_device_bytes"),
 "step_time_s":num(minimum=0),"breakdown_s":ref("breakdown_s"),
 "evaluation":{"oneOf":[obj({k:num(minimum=0) for k in ["tokens","interval_steps","global_batch_seqs","sequences","full_batches","last_batch_seqs","micro_batches_per_batch","batch_s","eval_pass_s","step_time_incl_eval_s"]}),{"type":"null"}]},
 "tokens_per_s":num(minimum=0),"mfu":num(minimum=0),"mfu_causal_halved":num(minimum=0),"hfu":num(minimum=0),
 "peak":obj({"name":string(),"flops_per_s":num(minimum=0)}),"mfu_convention":string(),"model_flops_per_step":num(minimum=0),"hardware_flops_per_step":num(minimum=0),
 "input":{"oneOf":[obj({"storage":string("storage id in hardware/catalog/storage"),"hosts":integer(minimum=1),"samples_per_host":num(minimum=0),"bytes_per_host":num(minimum=0),"storage_bytes_per_s":num("the job's aggregate read rate",minimum=0),"storage_s":num(minimum=0),"host_cpu_cores":integer(minimum=0),"cpu_s":num(minimum=0),"per_step_s":num(minimum=0),"bottleneck":string(),"prefetch_steps":integer(minimum=0),"input_bound":boolean(),"source":string()}),{"type":"null"}],"description":"the input pipeline per step (scenario data block), null without one"},
 "efficiency_source":string(),"network_backend":string("analytical or simgrid, with how it prices collectives"),"networks":ref("networks"),
 "cost":obj(cost_props,cost_req),"simulated_tasks":integer(minimum=0)}
always=["schema_version","command","scenario","model","system","plan","plan_choices","software_stack","feasible","infeasible_reasons","memory_per_device_bytes"]
defs["run"]=obj(run_props,always,desc="podsim run --format json; an infeasible plan has only the keys up to memory_per_device_bytes")
defs["run"]["if"]={"properties":{"feasible":{"const":True}}}
defs["run"]["then"]={"required":sorted(run_props.keys())}
defs["search"]=obj(head("search")|{"scenario":ref("file_ref"),"objective":string(),"price_option":string(enum=PRICE),"plans":integer(minimum=0),
 "feasible":integer(minimum=0),"screen_s":num("wall-clock seconds of screening",minimum=0),"plans_per_s":num(minimum=0),
 "systems":arr(obj({"label":string(),"chips":integer(minimum=1),"plans":integer(minimum=0),"feasible":integer(minimum=0),
   "rejected":{"type":"object","additionalProperties":obj({"count":integer(minimum=1),"example":string()}),"description":"by reason: count and one example"}})),
 "skipped_scales":arr(string()),"ranked":arr(ref("ranked_plan")),"pareto":arr(ref("ranked_plan")),
 "cheapest_within_deadline":ref("ranked_plan",True),"fastest_within_budget":ref("ranked_plan",True),"advice_note":string(null=True)},desc="podsim search --format json")
defs["sweep"]=obj(head("sweep")|{"sweep":ref("file_ref"),"objective":string(),"axes":arr(string()),
 "points":arr(obj({"axes":{"type":"object","additionalProperties":{"type":"string"}},"system":ref("system"),"params":num(minimum=0),
  "global_batch_seqs":integer(minimum=1),"token_budget":num(minimum=0),"price_option":string(enum=PRICE),"plans":integer(minimum=0),"feasible":integer(minimum=0),
  "best":ref("ranked_plan",True),"why_none":string(null=True),"cheapest_within_deadline":ref("ranked_plan",True),"fastest_within_budget":ref("ranked_plan",True),"advice_note":string(null=True)}))},desc="podsim sweep --json FILE")
pf=obj({"plan":ref("plan"),"description":string(),"step_time_s":num(minimum=0),"mfu":num(minimum=0),"hfu":num(minimum=0)})
defs["plan_figures"]=pf
defs["check"]=obj(head("check")|{"claim":ref("file_ref"),"scenario":ref("file_ref"),"plausible":boolean(),"findings":arr(string()),
 "best_mfu_plan":ref("plan_figures"),"best_mfu_plan_searched":boolean("true: found by the search, false: the scenario's own plan"),"plans_searched":integer(minimum=0),
 "highest_hfu_plan":ref("plan_figures"),"scenario_plan":ref("plan_figures",True),
 "tokens_in_claimed_days":num(null=True),"implied_tokens_at_claimed_utilization":num(null=True),"implied_mfu":num(null=True),"notes":arr(string()),
 "meets_claim":{"oneOf":[obj({"system":ref("system"),"plan":ref("plan"),"description":string(),"days_with_failures":num(minimum=0),"cost":ref("option_cost",True)}),{"type":"null"}]},
 "answer":string(null=True)},desc="podsim check --format json")
defs["validate"]=obj(head("validate")|{"runs":arr(obj({"id":string(),"system":ref("system",True),"plan":ref("plan",True),"published_step_time_s":num(null=True),
  "predicted_step_time_s":num(null=True),"error_pct":num("signed, (predicted - published) / published",null=True),"mfu":num(null=True),"fits_memory_model":boolean(null=True),
  "note":string(),"group":string(),"chosen":arr(string(),"unpublished settings podsim chose"),"error":string("why the run has no prediction",null=True)})),
 "mape_pct":num(minimum=0),"max_error_pct":num(minimum=0),"worst_id":string(),"predicted":integer(minimum=0),"failed":integer(minimum=0),
 "groups":arr(obj({"group":string(),"runs":integer(minimum=0),"mape_pct":num(minimum=0),"max_error_pct":num(minimum=0)}))},desc="podsim validate --format json")
defs["profile"]=obj(head("profile")|{"scenario":ref("file_ref"),"trace":obj({"file":string(),"format":string(),"steps":integer(minimum=1),"events":integer(minimum=1)}),
 "measured_step_s":num("device work a step in the trace",minimum=0),"named_per_step_s":num(minimum=0),"attributed_fraction":num("share of measured time in events named as podsim's ops",minimum=0),
 "measured_by_category_s":{"type":"object","additionalProperties":{"type":"number"},"description":"per step, by category"},
 "simulated":obj({"step_time_s":num(minimum=0),"compute_s":num(minimum=0),"exposed_communication_s":num(minimum=0),"optimizer_s":num(minimum=0)}),
 "ops":arr(obj({"op":string(),"measured_s":num("per layer and micro-batch; null when the trace has no event of this op",null=True),"simulated_s":num(minimum=0),"events":integer(minimum=0),"error_pct":num(null=True)})),
 "largest_unnamed":arr(obj({"name":string(),"per_step_s":num(minimum=0)}))},desc="podsim profile compare --format json")
schema={"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://podsim.dev/schema/output-2.json",
 "title":"podsim command output (schema_version 2)",
 "description":"The JSON that podsim run, search, sweep, check and validate write. Every output carries schema_version and command; every object lists all its keys (null where a value does not apply) and allows no others. Units are in key names (_s, _bytes, _usd, _per_s). See README.md, 'JSON output'.",
 "oneOf":[ref(c) for c in ["run","search","sweep","check","validate","profile"]],"$defs":defs}
import os
json.dump(schema,open(os.path.join(os.path.dirname(os.path.abspath(__file__)),"..","docs","output.schema.json"),"w"),indent=1)
