#include "reports/provision.hpp"

#include <cctype>

#include <fmt/format.h>

namespace podsim {

namespace {

// A resource name gcloud accepts: lowercase letters, digits and dashes, starting with a letter.
std::string resource_name(const std::string& s) {
    std::string o = "podsim-";
    for (char c : s) {
        if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else if (!o.empty() && o.back() != '-') o += '-';
        if (o.size() >= 40) break;
    }
    while (!o.empty() && o.back() == '-') o.pop_back();
    return o;
}

std::string megatron_flags(const ModelSpec& m, const ParallelPlan& p) {
    std::string f = fmt::format("--tensor-model-parallel-size {} --pipeline-model-parallel-size {}", p.tp, p.pp);
    if (p.vpp > 1) f += fmt::format(" --num-layers-per-virtual-pipeline-stage {}", m.layers / (p.pp * p.vpp));
    if (p.cp > 1) f += fmt::format(" --context-parallel-size {}", p.cp);
    if (p.ep > 1) f += fmt::format(" --expert-model-parallel-size {} --expert-tensor-parallel-size {}", p.ep, p.expert_tp());
    if (p.sp) f += " --sequence-parallel";
    if (p.zero == 1) f += " --use-distributed-optimizer";
    if (p.zero >= 2) f += " --use-torch-fsdp2";  // Megatron-core's FSDP path for ZeRO-2/3-style sharding
    f += fmt::format(" --micro-batch-size {} --global-batch-size {} --seq-length {}", p.micro_batch, p.global_batch, m.seq_len);
    switch (p.recompute) {
        case Recompute::none: break;
        case Recompute::selective: f += " --recompute-granularity selective"; break;
        case Recompute::minimal: f += " --recompute-granularity selective"; break;  // nearest; see the notes
        case Recompute::full: f += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1"; break;
    }
    // Megatron-LM's low-precision flags (arguments.py): --fp8-recipe defaults to delayed; NVFP4 is --fp4-format e2m1
    // --fp4-recipe nvfp4. It has no int8 training: an int8 plan is an AQT (MaxText) plan, run in bf16 here.
    if (p.precision == Precision::fp8) {
        f += " --bf16 --fp8-format hybrid";
        if (p.fp8_recipe != Fp8Recipe::delayed) f += fmt::format(" --fp8-recipe {}", to_string(p.fp8_recipe));
    } else if (p.precision == Precision::fp4) {
        f += " --bf16 --fp4-format e2m1 --fp4-recipe nvfp4";
    } else {
        f += p.precision == Precision::fp16 ? " --fp16" : " --bf16";
    }
    if (p.attention == AttentionKernel::flash) f += " --use-flash-attn";
    if (p.tp_comm_overlap != TpOverlap::none) f += " --tp-comm-overlap";
    if (p.dp_overlap) f += " --overlap-grad-reduce";
    if (p.param_gather_overlap && p.zero == 1) f += " --overlap-param-gather";
    return f;
}

std::string maxtext_flags(const SystemSpec& sys, const ParallelPlan& p) {
    // Inside a slice: FSDP (ZeRO-3) or plain data parallelism, tensor, sequence (context) and pipeline axes;
    // across slices: data parallelism over DCN.
    const int dcn = sys.slices;
    const int ici_dp = p.dp / dcn;
    std::string f = fmt::format("dcn_data_parallelism={} {}={} ici_tensor_parallelism={}", dcn,
                                p.zero >= 3 ? "ici_fsdp_parallelism" : "ici_data_parallelism", ici_dp, p.tp);
    if (p.cp > 1) f += fmt::format(" ici_context_parallelism={}", p.cp);
    if (p.pp > 1) f += fmt::format(" ici_pipeline_parallelism={}", p.pp);
    if (p.ep > 1) f += fmt::format(" ici_expert_parallelism={}", p.ep);
    f += fmt::format(" per_device_batch_size={:g}", double(p.global_batch) / sys.chips);
    if (p.recompute == Recompute::full) f += " remat_policy=full";
    else if (p.recompute == Recompute::minimal) f += " remat_policy=minimal";
    else f += " remat_policy=save_dot_except_mlp";  // the closest MaxText policy to Megatron's selective recompute
    if (p.precision == Precision::fp8) f += " quantization=fp8";
    if (p.precision == Precision::int8) f += " quantization=int8";  // AQT (MaxText/layers/quantizations.py)
    return f;
}

}  // namespace

Provisioning provisioning_for(const std::string& name, const SystemSpec& sys, const ModelSpec& m,
                              const ParallelPlan& p, PriceOption price, const std::string& region) {
    Provisioning out;
    const std::string id = resource_name(name);
    const std::string where = region.empty() ? "the region of your choice" : region;
    if (sys.is_gpu && sys.node.provider == "onprem") {
        out.notes.push_back(sys.node.id + " is an on-premise system: no cloud provisioning; use your scheduler (e.g. "
                            "Slurm: " + std::to_string(sys.nodes) + " nodes x " + std::to_string(sys.node.gpus_per_node) + " GPUs)");
    } else if (!sys.is_gpu) {
        const auto& r = *sys.chip.tpu;
        out.commands.push_back("export PROJECT=my-project ZONE=\"" + where + "-?\"   # set: a zone of " + where + " that offers " +
                               sys.accelerator_type);
        std::string c = fmt::format("gcloud compute tpus queued-resources create {}-qr --project=$PROJECT --zone=$ZONE "
                                    "--accelerator-type={} --runtime-version={}",
                                    id, sys.accelerator_type, r.runtime_version.empty() ? "$RUNTIME_VERSION" : r.runtime_version);
        if (sys.slices > 1) c += fmt::format(" --node-count={} --node-prefix={}", sys.slices, id);
        else c += " --node-id=" + id;
        if (price == PriceOption::spot) c += " --spot";
        out.commands.push_back(c);
        out.commands.push_back(fmt::format("gcloud compute tpus queued-resources describe {}-qr --project=$PROJECT "
                                           "--zone=$ZONE   # wait for state ACTIVE",
                                           id));
        if (sys.slices > 1)
            out.notes.push_back(fmt::format("{} slices over DCN (multislice): MaxText's dcn_* axes span the slices", sys.slices));
        out.framework = "MaxText";
        out.launch_flags = maxtext_flags(sys, p);
        if (p.recompute == Recompute::none)
            out.notes.push_back("no recomputation: MaxText has no such remat_policy; its least recomputation is "
                                "remat_policy=minimal (recomputes the non-GEMM ops)");
    } else {
        out.commands.push_back("export PROJECT=my-project REGION=" + where + " ZONE=\"" + where + "-?\"   # set: a zone of " + where +
                               " that offers " + sys.node.id);
        out.commands.push_back(fmt::format("gcloud compute resource-policies create group-placement {}-placement "
                                           "--project=$PROJECT --region=$REGION --collocation=collocated",
                                           id));
        std::string c = fmt::format("gcloud compute instances bulk create --project=$PROJECT --zone=$ZONE "
                                    "--name-pattern=\"{}-####\" --count={} --machine-type={} --maintenance-policy=TERMINATE "
                                    "--resource-policies={}-placement --image-family=$IMAGE_FAMILY --image-project=$IMAGE_PROJECT",
                                    id, sys.nodes, sys.node.id, id);
        if (price == PriceOption::spot) c += " --provisioning-model=SPOT --instance-termination-action=DELETE";
        else c += " --provisioning-model=STANDARD";
        out.commands.push_back(c);
        out.notes.push_back("A3 machine types bring their GPUs; GPUDirect (TCPX/TCPXO/RDMA) needs the extra VPC networks "
                            "and NICs of Google's A3 cluster guide, not shown here");
        out.notes.push_back("a compact placement policy holds a limited number of VMs; larger clusters use several, "
                            "or a reservation");
        out.framework = "Megatron-LM";
        out.launch_flags = megatron_flags(m, p);
        if (p.recompute == Recompute::minimal)
            out.notes.push_back("podsim's minimal recomputation (every non-GEMM op) has no exact Megatron-LM flag; "
                                "selective (the attention core) is the nearest");
    }
    if (price == PriceOption::commit_1y || price == PriceOption::commit_3y)
        out.notes.push_back(std::string("the ") + to_string(price) +
                            " price needs a committed-use purchase for these resources first (gcloud compute commitments "
                            "create ... --plan=" + (price == PriceOption::commit_1y ? "12-month" : "36-month") + ")");
    return out;
}

}  // namespace podsim
