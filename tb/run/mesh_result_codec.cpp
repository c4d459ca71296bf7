// The codec of MeshRunResult (tb/run/mesh_run.h): the mesh run's
// statistics file and its way across the fork.
#include "tb/run/mesh_run.h"
#include "tb/run/result_codec.h"

namespace kb {

nlohmann::json to_json(const MeshRunResult& r) {
  nlohmann::json j;
  j["ok"] = r.ok;
  j["error"] = r.error;
  j["mesh"] = {r.mesh_h, r.mesh_w, r.pes_per_cube};
  j["start_ps"] = r.start_ps;
  j["end_ps"] = r.end_ps;
  j["commands"] = r.commands;
  j["stages"] = r.stages;
  j["dispatch_ps"] = r.dispatch_ps;
  j["sim_wall_seconds"] = r.sim_wall_seconds;
  j["peak_rss_kb"] = r.peak_rss_kb;
  j["data_bytes"] = r.data_bytes;
  j["metrics"] = metrics_json(r.metrics);
  j["pes"] = nlohmann::json::array();
  for (const MeshPeResult& p : r.pes) {
    nlohmann::json busy = nlohmann::json::object();  // by component name
    for (const ComponentInfo& c : kComponents) busy[c.name] = p.busy_ps[int(c.component)];
    j["pes"].push_back({{"global", p.global}, {"name", p.name}, {"launched", p.launched},
                        {"start_ps", p.launch.start_ps}, {"end_ps", p.launch.end_ps},
                        {"commands", p.launch.commands}, {"dispatch_ps", p.launch.dispatch_ps},
                        {"stall_ps", p.launch.stall_ps}, {"error", p.launch.error}, {"busy_ps", busy}});
  }
  j["links"] = nlohmann::json::array();
  for (const MeshLinkResult& l : r.links) {
    j["links"].push_back({{"name", l.name}, {"bytes", l.bytes}, {"transactions", l.transactions},
                          {"busy_ps", l.busy_ps}});
  }
  return j;
}

MeshRunResult mesh_run_result_from_json(const nlohmann::json& j) {
  MeshRunResult r;
  if (j.contains("error") && !j.contains("ok")) {  // the child crashed
    r.error = j.at("error").get<std::string>();
    return r;
  }
  r.ok = j.at("ok");
  r.error = j.at("error");
  r.mesh_h = j.at("mesh").at(0);
  r.mesh_w = j.at("mesh").at(1);
  r.pes_per_cube = j.at("mesh").at(2);
  r.start_ps = j.at("start_ps");
  r.end_ps = j.at("end_ps");
  r.commands = j.at("commands");
  r.stages = j.at("stages");
  r.dispatch_ps = j.at("dispatch_ps");
  r.sim_wall_seconds = j.at("sim_wall_seconds");
  r.peak_rss_kb = j.at("peak_rss_kb");
  r.data_bytes = j.at("data_bytes");
  r.metrics = metrics_from_json(j.at("metrics"));
  for (const auto& jp : j.at("pes")) {
    MeshPeResult p;
    p.global = jp.at("global");
    p.name = jp.at("name");
    p.launched = jp.at("launched");
    p.launch.start_ps = jp.at("start_ps");
    p.launch.end_ps = jp.at("end_ps");
    p.launch.commands = jp.at("commands");
    p.launch.dispatch_ps = jp.at("dispatch_ps");
    p.launch.stall_ps = jp.at("stall_ps");
    p.launch.error = jp.at("error");
    for (const ComponentInfo& c : kComponents) p.busy_ps[int(c.component)] = jp.at("busy_ps").at(c.name);
    r.pes.push_back(std::move(p));
  }
  for (const auto& jl : j.at("links")) {
    r.links.push_back({jl.at("name"), jl.at("bytes"), jl.at("transactions"), jl.at("busy_ps")});
  }
  return r;
}

}  // namespace kb
