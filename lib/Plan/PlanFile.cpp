//===- PlanFile.cpp - read plan files and plan flags ----------------------===//
//
// nlohmann-json reports malformed input by throwing; this file is built
// with exceptions and turns them into messages.
//
//===----------------------------------------------------------------------===//
#include "tp/Plan/Plan.h"


#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

using namespace mlir;
using namespace mlir::tp;
using json = nlohmann::ordered_json;

/// More devices than any mesh tp can address (the runtime's limit too).
static constexpr int64_t kMaxMeshSize = 65536;

void Plan::setEntry(PlanEntry entry) {
  for (PlanEntry &e : entries)
    if (e.pattern == entry.pattern) {
      e = std::move(entry);
      return;
    }
  entries.push_back(std::move(entry));
}

namespace {
struct PlanFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
} // namespace

/// A mesh axis name: an identifier, as PyTorch's mesh_dim_names are used.
static bool isAxisName(StringRef name) {
  if (name.empty() || !(std::isalpha(name[0]) || name[0] == '_'))
    return false;
  return llvm::all_of(name, [](char c) { return std::isalnum(c) || c == '_'; });
}

/// "line L, column C" of byte offset `pos` in `text`.
static std::string position(const std::string &text, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

constexpr const char *kPipelineExample =
    "{\"axis\": \"pp\", \"split_before\": [\"layers.4\"], "
    "\"microbatches\": 8, \"schedule\": \"1f1b\"}";

static std::optional<std::string> checkSchedule(StringRef schedule) {
  if (schedule == "gpipe" || schedule == "1f1b")
    return std::nullopt;
  return "pipeline schedule '" + schedule.str() +
         "' is not one of gpipe, 1f1b";
}

/// The plan file's "pipeline" object.
static std::optional<std::string> readPipeline(const json &value,
                                               PipelinePlan &pipeline) {
  if (!value.is_object())
    return std::string("\"pipeline\" must be an object like ") +
           kPipelineExample;
  for (auto &[key, v] : value.items()) {
    if (key == "axis") {
      if (!v.is_string() || !isAxisName(v.get<std::string>()))
        return std::string("pipeline \"axis\" must name a mesh axis");
      pipeline.axis = v.get<std::string>();
    } else if (key == "split_before") {
      bool strings = v.is_array() &&
                     llvm::all_of(v, [](auto &e) { return e.is_string(); });
      if (!strings)
        return std::string("pipeline \"split_before\" must be a list of "
                           "module names, like [\"layers.4\"]");
      pipeline.splitBefore.clear();
      for (auto &e : v)
        pipeline.splitBefore.push_back(e.get<std::string>());
    } else if (key == "microbatches") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
          v.get<int64_t>() > 4096)
        return std::string("pipeline \"microbatches\" must be an integer "
                           "from 1 to 4096");
      pipeline.microbatches = v.get<int64_t>();
    } else if (key == "schedule") {
      if (!v.is_string())
        return std::string("pipeline \"schedule\" must be \"gpipe\" or "
                           "\"1f1b\"");
      pipeline.schedule = v.get<std::string>();
      if (auto err = checkSchedule(pipeline.schedule))
        return err;
    } else {
      return "unknown pipeline key \"" + key +
             "\" (expected axis, split_before, microbatches, schedule)";
    }
  }
  if (pipeline.axis.empty())
    return std::string("\"pipeline\" needs \"axis\", the mesh axis of "
                       "the stages: ") +
           kPipelineExample;
  return std::nullopt;
}

std::optional<std::string> tp::parsePipelineSpec(StringRef spec, Plan &plan) {
  PipelinePlan &p = plan.pipeline;
  SmallVector<StringRef> parts;
  spec.split(parts, ',');
  for (StringRef part : parts) {
    auto [key, value] = part.split('=');
    if (value.empty())
      return "--pipeline expects key=value[,key=value...] (axis, "
             "split_before, microbatches, schedule), got '" +
             spec.str() + "'";
    if (key == "axis") {
      if (!isAxisName(value))
        return "--pipeline axis '" + value.str() + "' is not a mesh axis name";
      p.axis = value.str();
    } else if (key == "split_before") {
      SmallVector<StringRef> modules;
      value.split(modules, '+');
      p.splitBefore.clear();
      for (StringRef m : modules)
        p.splitBefore.push_back(m.str());
    } else if (key == "microbatches") {
      if (value.getAsInteger(10, p.microbatches) || p.microbatches < 1 ||
          p.microbatches > 4096)
        return "--pipeline microbatches must be an integer from 1 to 4096, "
               "got '" +
               value.str() + "'";
    } else if (key == "schedule") {
      p.schedule = value.str();
      if (auto err = checkSchedule(p.schedule))
        return "--pipeline: " + *err;
    } else {
      return "--pipeline: unknown key '" + key.str() +
             "' (expected axis, split_before, microbatches, schedule)";
    }
  }
  if (p.axis.empty())
    return "--pipeline needs axis=NAME, the mesh axis of the stages";
  p.source = "--pipeline";
  return std::nullopt;
}

std::optional<std::string> tp::readPlanFile(StringRef path, Plan &plan) {
  std::ifstream in(path.str());
  if (!in)
    return path.str() + ": cannot open plan file";
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  std::string where = path.str() + ": ";

  // Plans are a few levels deep; a limit keeps a hostile file from
  // exhausting the stack, and a repeated key is an error, not "last wins".
  constexpr int kMaxDepth = 32;
  std::vector<std::set<std::string>> keysSeen;
  auto check = [&](int depth, json::parse_event_t event, json &parsed) {
    if (depth > kMaxDepth)
      throw PlanFileError("nested deeper than " + std::to_string(kMaxDepth) +
                          " levels; a plan is a flat object of objects");
    if (event == json::parse_event_t::object_start)
      keysSeen.emplace_back();
    else if (event == json::parse_event_t::object_end && !keysSeen.empty())
      keysSeen.pop_back();
    else if (event == json::parse_event_t::key && !keysSeen.empty() &&
             !keysSeen.back().insert(parsed.get<std::string>()).second)
      throw PlanFileError("the key \"" + parsed.get<std::string>() +
                          "\" appears twice in one object");
    return true;
  };
  json doc;
  try {
    doc = json::parse(text, check);
  } catch (const PlanFileError &e) {
    return where + e.what();
  } catch (const json::parse_error &e) {
    // e.byte is one past the offending character.
    std::string msg = e.what();
    size_t colon = msg.find("syntax error");
    return where + "malformed JSON at " +
           position(text, e.byte ? e.byte - 1 : 0) + ": " +
           (colon == std::string::npos ? msg : msg.substr(colon));
  } catch (const json::exception &e) {
    // Numbers out of range (out_of_range.406) and the like.
    return where + "malformed JSON (" + e.what() + ")";
  }
  if (!doc.is_object())
    return where + "a plan is a JSON object with \"mesh\", \"plan\", "
                   "\"data_parallel\", \"sync_batchnorm\", \"recompute\", "
                   "\"precision\", \"grad_reduce_dtype\", \"pipeline\", "
                   "\"inputs\", \"outputs\"";
  for (auto &[key, value] : doc.items()) {
    if (key == "mesh") {
      if (!value.is_object())
        return where + "\"mesh\" must be an object like {\"dp\": 2, \"tp\": 4}";
      plan.mesh.clear();
      for (auto &[axis, size] : value.items()) {
        if (!isAxisName(axis))
          return where + "mesh axis \"" + axis +
                 "\" is not a name (letters, digits and _)";
        if (!size.is_number_integer() || size.get<int64_t>() <= 0 ||
            size.get<int64_t>() > kMaxMeshSize)
          return where + "mesh axis \"" + axis +
                 "\" must have a positive integer size (at most " +
                 std::to_string(kMaxMeshSize) + ")";
        plan.mesh.emplace_back(axis, size.get<int64_t>());
      }
    } else if (key == "plan") {
      if (!value.is_object())
        return where + "\"plan\" must map module paths to styles";
      for (auto &[pattern, style] : value.items()) {
        if (!style.is_string())
          return where + "plan entry \"" + pattern +
                 "\" must be a style string (colwise, rowwise, sequence, "
                 "replicate)";
        plan.setEntry({pattern, style.get<std::string>(), path.str()});
      }
    } else if (key == "data_parallel") {
      if (!value.is_string())
        return where + "\"data_parallel\" must name a mesh axis";
      plan.dataParallel = value.get<std::string>();
    } else if (key == "sync_batchnorm") {
      if (!value.is_boolean())
        return where + "\"sync_batchnorm\" must be true or false";
      plan.syncBatchNorm = value.get<bool>();
    } else if (key == "recompute") {
      bool strings = value.is_array() &&
                     llvm::all_of(value, [](auto &v) { return v.is_string(); });
      if (!strings)
        return where + "\"recompute\" must be a list of module names, like "
                       "[\"layers.*\"]";
      for (auto &v : value)
        plan.recompute.push_back(v.get<std::string>());
    } else if (key == "precision" || key == "grad_reduce_dtype") {
      if (!value.is_string() ||
          (value.get<std::string>() != "f32" && value.get<std::string>() != "bf16"))
        return where + "\"" + key + "\" must be \"f32\" or \"bf16\"";
      (key == "precision" ? plan.precision : plan.gradReduceDtype) =
          value.get<std::string>();
    } else if (key == "pipeline") {
      if (std::optional<std::string> err = readPipeline(value, plan.pipeline))
        return where + *err;
      plan.pipeline.source = path.str();
    } else if (key == "inputs" || key == "outputs") {
      if (!value.is_object())
        return where + "\"" + key + "\" must map names to layouts";
      auto &into = key == "inputs" ? plan.inputs : plan.outputs;
      for (auto &[name, style] : value.items()) {
        if (!style.is_string())
          return where + key + " entry \"" + name + "\" must be a string";
        into.emplace_back(name, style.get<std::string>());
      }
    } else {
      return where + "unknown key \"" + key +
             "\" (expected mesh, plan, data_parallel, sync_batchnorm, "
             "recompute, precision, grad_reduce_dtype, pipeline, inputs, "
             "outputs)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> tp::parseMeshSpec(StringRef spec, Plan &plan) {
  plan.mesh.clear();
  SmallVector<StringRef> parts;
  spec.split(parts, ',');
  for (StringRef part : parts) {
    auto [name, size] = part.split('=');
    int64_t n;
    if (!isAxisName(name) || size.getAsInteger(10, n) || n <= 0 ||
        n > kMaxMeshSize)
      return "--mesh expects name=size[,name=size...] with names of letters, "
             "digits and _ and sizes 1.." +
             std::to_string(kMaxMeshSize) + ", got '" + spec.str() + "'";
    for (auto &axis : plan.mesh)
      if (axis.first == name)
        return "--mesh names axis '" + name.str() + "' twice in '" +
               spec.str() + "'";
    plan.mesh.emplace_back(name.str(), n);
  }
  return std::nullopt;
}

std::optional<std::string>
tp::parseAssignment(StringRef spec, StringRef what,
                    std::vector<std::pair<std::string, std::string>> &into) {
  auto [name, value] = spec.split('=');
  if (name.empty() || value.empty() || value.ends_with("@") ||
      value.starts_with("@"))
    return what.str() + " expects name=style[@axis], got '" + spec.str() +
           "'";
  for (auto &entry : into)
    if (entry.first == name) {
      entry.second = value.str();
      return std::nullopt;
    }
  into.emplace_back(name.str(), value.str());
  return std::nullopt;
}

int64_t tp::batchNormGroups(const Plan &plan) {
  if (plan.syncBatchNorm || plan.dataParallel.empty())
    return 1;
  for (const auto &[axis, size] : plan.mesh)
    if (axis == plan.dataParallel)
      return size;
  return 1;
}

// Matched by hand, not as a regex: apply-plan matches every entry against
// every module of a deep model, and compiling a regex per match was 40% of
// its time.
bool tp::matchesPattern(StringRef pattern, StringRef module) {
  while (!pattern.empty() && pattern.front() != '*') {
    if (module.empty() || module.front() != pattern.front())
      return false;
    pattern = pattern.drop_front();
    module = module.drop_front();
  }
  if (pattern.empty())
    return module.empty();
  // `*`: one or more characters of one path part.
  StringRef rest = pattern.drop_front();
  for (size_t n = 1; n <= module.size() && module[n - 1] != '.'; ++n)
    if (matchesPattern(rest, module.drop_front(n)))
      return true;
  return false;
}

std::optional<std::string>
tp::resolvePlanEntries(ArrayRef<PlanEntry> entries,
                       ArrayRef<std::string> modules, PlanMatches &out) {
  out.applies.assign(entries.size(), {});
  out.matchedAny.assign(entries.size(), false);
  out.overrides.clear();
  auto describe = [&](unsigned i) {
    return "'" + entries[i].pattern + "=" + entries[i].style + "' (" +
           entries[i].source + ")";
  };
  for (const std::string &module : modules) {
    SmallVector<unsigned, 2> matching;
    for (unsigned i = 0; i < entries.size(); ++i)
      if (matchesPattern(entries[i].pattern, module)) {
        matching.push_back(i);
        out.matchedAny[i] = true;
      }
    if (matching.empty())
      continue;
    SmallVector<unsigned, 2> exact;
    for (unsigned i : matching)
      if (!StringRef(entries[i].pattern).contains('*'))
        exact.push_back(i);
    if (matching.size() > 1 && exact.size() != 1)
      return "plan entries " + describe(matching[0]) + " and " +
             describe(matching[1]) + " both match module '" + module +
             "'; name the module exactly in one of them (an exact name wins "
             "over a pattern) or narrow a pattern";
    unsigned winner = matching.size() == 1 ? matching[0] : exact[0];
    out.applies[winner].push_back(module);
    for (unsigned i : matching)
      if (i != winner)
        out.overrides.push_back({module, describe(winner), describe(i)});
  }
  return std::nullopt;
}

std::string tp::closestModules(StringRef pattern,
                               ArrayRef<std::string> modules) {
  SmallVector<std::pair<unsigned, std::string>> near;
  for (const std::string &m : modules)
    near.push_back({pattern.edit_distance(m), m});
  llvm::sort(near);
  std::string out;
  for (size_t i = 0; i < near.size() && i < 3; ++i)
    out += (i ? ", " : "") + near[i].second;
  return out;
}

std::optional<std::string> tp::addEntries(ArrayRef<std::string> entries,
                                          Plan &plan) {
  for (const std::string &entry : entries) {
    auto [pattern, style] = StringRef(entry).split('=');
    if (pattern.empty() || style.empty())
      return "--plan-entry expects module=style, got '" + entry + "'";
    plan.setEntry({pattern.str(), style.str(), "--plan-entry"});
  }
  return std::nullopt;
}

SmallVector<StringRef> tp::pytorchNames(func::FuncOp func, unsigned i) {
  SmallVector<StringRef> names;
  if (auto torch = func.getArgAttrOfType<ArrayAttr>(i, "tp.torch_names"))
    for (Attribute n : torch)
      names.push_back(cast<StringAttr>(n).getValue());
  else
    names.push_back(func.getArgAttrOfType<StringAttr>(i, "tp.param").getValue());
  return names;
}

llvm::StringMap<SmallVector<unsigned>> tp::weightsByModule(func::FuncOp func) {
  llvm::StringMap<SmallVector<unsigned>> modules;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!func.getArgAttrOfType<StringAttr>(i, "tp.param"))
      continue;
    for (StringRef name : pytorchNames(func, i)) {
      auto [module, leaf] = name.rsplit('.');
      if (!leaf.empty() && !llvm::is_contained(modules[module], i))
        modules[module].push_back(i);
    }
  }
  return modules;
}

ProjectionWeights tp::projectionWeights(func::FuncOp func,
                                        ArrayRef<unsigned> params,
                                        StringRef module) {
  if (auto weight = moduleWeight(func, params, module, "weight"))
    return {weight, moduleWeight(func, params, module, "bias")};
  if (auto weight = moduleWeight(func, params, module, "in_proj_weight"))
    return {weight, moduleWeight(func, params, module, "in_proj_bias")};
  return {};
}

std::optional<unsigned> tp::moduleWeight(func::FuncOp func,
                                         ArrayRef<unsigned> params,
                                         StringRef module, StringRef leaf) {
  std::string want = (module + "." + leaf).str();
  for (unsigned i : params)
    if (llvm::is_contained(pytorchNames(func, i), want))
      return i;
  return std::nullopt;
}

std::optional<std::string> tp::readPlanOptions(StringRef planFile,
                                               ArrayRef<std::string> meshSpec,
                                               Plan &plan) {
  if (!planFile.empty())
    if (auto err = readPlanFile(planFile, plan))
      return err;
  if (!meshSpec.empty())
    return parseMeshSpec(llvm::join(meshSpec, ","), plan);
  return std::nullopt;
}
