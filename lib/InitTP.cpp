//===- InitTP.cpp - register every tp dialect and pass --------------------===//
#include "tp/InitTP.h"
#include "tp/Autodiff/Autodiff.h"
#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Pipelines/Pipelines.h"
#include "tp/Plan/Passes.h"
#include "tp/Sharding/Passes.h"

#include "mlir/IR/DialectRegistry.h"

void mlir::tp::registerTPDialects(DialectRegistry &registry) {
  registry.insert<TPDialect>();
  registerVJPInterfaceExternalModels(registry);
}

void mlir::tp::registerTPPasses() {
  registerTPConversionPasses();
  registerTPShardingPasses();
  registerTPPlanPasses();
  registerTPAutodiffPasses();
  registerTPPipelines();
}
