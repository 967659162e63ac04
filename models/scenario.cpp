#include "models/scenario.hpp"

namespace podsim {

Scenario scenario_from_json(const Json& j, const std::string& file, const Catalog& cat) {
    JsonObject o(j, file, "$");
    o.only_keys({"schema_version", "name", "description", "model", "system", "parallel", "batch", "training",
                 "pricing", "notes"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    Scenario s;
    s.file = file;
    s.name = o.string("name");
    s.description = o.opt_string("description").value_or("");
    s.model = model_from_json(o.object("model"));
    auto sys = o.object("system");
    sys.only_keys({"accelerator_type", "slices", "machine_type", "nodes"});
    if (sys.has("accelerator_type")) {
        if (sys.has("machine_type")) sys.fail("machine_type", "give accelerator_type (TPU) or machine_type (GPU), not both");
        const int slices = static_cast<int>(sys.has("slices") ? sys.positive_int("slices") : 1);
        s.system = cat.tpu_system(sys.string("accelerator_type"), slices, file, sys.at_path("accelerator_type"));
    } else if (sys.has("machine_type")) {
        s.system = cat.gpu_system(sys.string("machine_type"), static_cast<int>(sys.positive_int("nodes")), file,
                                  sys.at_path("machine_type"));
    } else {
        sys.fail("accelerator_type", "missing: expected accelerator_type (e.g. \"v4-2048\") or machine_type + nodes");
    }
    auto training = o.object("training");
    s.plan = plan_from_json(o.object("parallel"), o.object("batch"), training);
    s.token_budget = training.opt_number("token_budget").value_or(0);
    if (s.token_budget < 0) training.fail("token_budget", "expected a token count >= 0");
    if (auto pr = o.opt_object("pricing")) {
        pr->only_keys({"region"});
        s.region = pr->string("region");
    }
    return s;
}

Scenario load_scenario(const std::string& file, const Catalog& cat) {
    return scenario_from_json(load_json_file(file), file, cat);
}

}  // namespace podsim
