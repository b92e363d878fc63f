//===- ExternalDataTest.cpp - external data confined to the model's folder ===//
#include "tprt/ExternalData.h"
#include "tprt/WeightLoader.h"
#include "tprt/tprt.h"

#include "onnx/onnx_pb.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tprt;

TEST(ExternalData, NormalizesLocationsInsideTheFolder) {
  std::string why;
  EXPECT_EQ(normalizeExternalLocation("weights.bin", why), "weights.bin");
  EXPECT_EQ(normalizeExternalLocation("./a//b/./c.bin", why), "a/b/c.bin");
  EXPECT_EQ(normalizeExternalLocation("a/../b.bin", why), "b.bin");
  EXPECT_EQ(normalizeExternalLocation("a/b/../../c", why), "c");
}

TEST(ExternalData, RefusesLocationsThatLeaveTheFolder) {
  for (const char *location :
       {"", "/etc/hostname", "..", "../x", "a/../../x", "a/b/../../../x",
        "./../x", ".", "a/..", "//x"}) {
    std::string why;
    EXPECT_EQ(normalizeExternalLocation(location, why), "") << location;
    EXPECT_FALSE(why.empty()) << location;
  }
  std::string why;
  EXPECT_EQ(normalizeExternalLocation(std::string("a\0/../../x", 10), why),
            "");
  EXPECT_EQ(why, "the location holds a NUL byte");
}

namespace {
/// A model folder inside a scratch folder: <root>/model/, and
/// <root>/outside.bin beside it.
struct Folders {
  std::string root, model;
  Folders() {
    char tmpl[] = "/tmp/tprt-external-XXXXXX";
    root = mkdtemp(tmpl);
    model = root + "/model";
    EXPECT_EQ(mkdir(model.c_str(), 0700), 0);
    std::ofstream(root + "/outside.bin") << std::string(16, 'x');
    std::ofstream(model + "/inside.bin") << std::string(16, 'y');
  }
  ~Folders() {
    std::string cmd = "rm -rf '" + root + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
};

onnx::TensorProto externalTensor(const std::string &location,
                                 const std::string &offset = "0") {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  kv = t.add_external_data();
  kv->set_key("offset");
  kv->set_value(offset);
  return t;
}
} // namespace

TEST(ExternalData, ResolvesAndChecksTheRange) {
  Folders f;
  ExternalDataRange range;
  ASSERT_TRUE(
      resolveExternalData(externalTensor("inside.bin"), f.model, 16, range));
  EXPECT_EQ(range.path.substr(range.path.size() - 17), "/model/inside.bin");
  EXPECT_EQ(range.length, 16u);
  Status past =
      resolveExternalData(externalTensor("inside.bin", "4"), f.model, 16, range);
  ASSERT_FALSE(past);
  EXPECT_NE(past.message().find("needs bytes 4 to 20"), std::string::npos)
      << past.message();
  Status sign =
      resolveExternalData(externalTensor("inside.bin", "-4"), f.model, 16, range);
  ASSERT_FALSE(sign);
  EXPECT_NE(sign.message().find("offset '-4' is not a byte count"),
            std::string::npos);
}

TEST(ExternalData, RefusesLinksLeadingOut) {
  Folders f;
  ASSERT_EQ(symlink("../outside.bin", (f.model + "/soft.bin").c_str()), 0);
  ASSERT_EQ(link((f.root + "/outside.bin").c_str(),
                 (f.model + "/hard.bin").c_str()),
            0);
  // A link to a folder outside, with the file behind it.
  ASSERT_EQ(symlink("..", (f.model + "/up").c_str()), 0);
  ExternalDataRange range;
  for (const char *location : {"soft.bin", "up/outside.bin", "hard.bin",
                               "up/model/../outside.bin"}) {
    Status s =
        resolveExternalData(externalTensor(location), f.model, 16, range);
    ASSERT_FALSE(s) << location;
    EXPECT_NE(s.message().find("is refused"), std::string::npos)
        << s.message();
  }
}

// The runtime's weight loader refuses what tp-compile would have refused,
// for a model changed after it was compiled: nothing is read.
TEST(ExternalData, WeightLoaderRefusesAndReadsNothing) {
  Folders f;
  onnx::ModelProto model;
  model.set_ir_version(8);
  *model.mutable_graph()->add_initializer() = externalTensor("../outside.bin");
  std::string path = f.model + "/model.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(model.SerializeToOstream(&out));
  }
  std::unique_ptr<WeightSource> weights;
  ASSERT_TRUE(WeightSource::open(path, weights));
  TensorSpec t;
  t.name = "w";
  t.dtype = TPRT_F32;
  t.shape = {4};
  t.localShape = {4};
  t.sharding = {{}};
  Mesh mesh;
  mesh.names = {"tp"};
  mesh.sizes = {1};
  std::vector<float> local(4, -1.0f);
  Status s = weights->loadBlock(t, mesh, 0, local.data());
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("climbs out of the model's folder"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(local, std::vector<float>(4, -1.0f));
}
