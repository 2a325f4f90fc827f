/*===- muon-capi-test.c - The muon C API from a C99 program -------------===*\
|*                                                                            *|
|* Registers muon's dialects (muonRegisterAllDialects only), parses a module   *|
|* with one muon.step, prints its report and the plan of parameter 0, builds  *|
|* and runs the muon-to-llvm pipeline and prints the lowered module; checks   *|
|* that an unknown target, a stack bound below -1 and a null executable are  *|
|* refused. Run by test/CAPI/capi.test.                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"
#include "muon-c/Dialects.h"
#include "muon-c/Execution.h"
#include "muon-c/LargeStack.h"
#include "muon-c/Pipeline.h"
#include "muon-c/Step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kModule =
    "dist.mesh @m [dp = 2, tp = 2]\n"
    "!t = !dist.tensor<8x4xf32, @m, [shard<0>, shard<1>]>\n"
    "func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {\n"
    "  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) "
    "{lr = 0.02 : f64}\n"
    "  return %r#0, %r#1 : !t, !t\n"
    "}\n";

/* Prints a piece of text as it comes. */
static void printText(MlirStringRef text, void *userData) {
  fwrite(text.data, 1, text.length, (FILE *)userData);
}

/* Prints one plan step per line. */
static void printPlanLine(MlirStringRef line, void *userData) {
  (void)userData;
  printf("plan: %.*s\n", (int)line.length, line.data);
}

/* Collects an error message (possibly in pieces) into a buffer. */
typedef struct Message {
  char text[512];
  size_t length;
} Message;

static void collectMessage(MlirStringRef piece, void *userData) {
  Message *message = (Message *)userData;
  size_t room = sizeof(message->text) - 1 - message->length;
  size_t n = piece.length < room ? piece.length : room;
  size_t i;
  for (i = 0; i < n; ++i)
    message->text[message->length + i] = piece.data[i];
  message->length += n;
  message->text[message->length] = '\0';
}

static int lower(MlirContext context, MlirModule module) {
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  Message error = {{0}, 0};
  MuonLLVMPipelineOptions options = muonLLVMPipelineOptionsDefault();
  int status = 0;
  if (mlirLogicalResultIsFailure(
          muonBuildMuonToLLVMPipeline(opm, options, collectMessage, &error))) {
    fprintf(stderr, "building the pipeline failed: %s\n", error.text);
    status = 1;
  } else if (mlirLogicalResultIsFailure(
                 mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)))) {
    fprintf(stderr, "running the pipeline failed\n");
    status = 1;
  } else {
    mlirOperationPrint(mlirModuleGetOperation(module), printText, stdout);
    printf("\n");
  }
  mlirPassManagerDestroy(pm);
  return status;
}

/* Building the pipeline with `options` must fail with a message, which is
   printed; `what` names the options in the failure lines. */
static int refused(MlirContext context, MuonLLVMPipelineOptions options,
                   const char *what) {
  MlirPassManager pm = mlirPassManagerCreate(context);
  Message error = {{0}, 0};
  int status = 0;
  if (mlirLogicalResultIsSuccess(muonBuildMuonToLLVMPipeline(
          mlirPassManagerGetAsOpPassManager(pm), options, collectMessage,
          &error))) {
    fprintf(stderr, "%s was accepted\n", what);
    status = 1;
  } else if (error.length == 0) {
    fprintf(stderr, "%s failed without a message\n", what);
    status = 1;
  } else {
    printf("error: %s\n", error.text);
  }
  mlirPassManagerDestroy(pm);
  return status;
}

/* An unknown target, a stack bound below -1, a negative prefetch bound and
   target cuda without a chip or with one LLVM does not know are refused;
   the defaults are muon-opt's. */
static int badOptions(MlirContext context) {
  MuonLLVMPipelineOptions options = muonLLVMPipelineOptionsDefault();
  int status;
  if (options.nsStackBytes != -1 || !options.assignOwners ||
      !options.batchCollectives || options.maxPrefetchBytes != 0 ||
      !options.placeDeallocations || options.cudaChip.length != 5 ||
      strncmp(options.cudaChip.data, "sm_90", 5) != 0) {
    fprintf(stderr, "the defaults are not muon-to-llvm's\n");
    return 1;
  }
  options.target = mlirStringRefCreateFromCString("gpu");
  status = refused(context, options, "target gpu");
  options = muonLLVMPipelineOptionsDefault();
  options.nsStackBytes = -5;
  if (status == 0)
    status = refused(context, options, "nsStackBytes -5");
  options = muonLLVMPipelineOptionsDefault();
  options.maxPrefetchBytes = -3;
  if (status == 0)
    status = refused(context, options, "maxPrefetchBytes -3");
  options = muonLLVMPipelineOptionsDefault();
  options.target = mlirStringRefCreateFromCString("cuda");
  options.cudaChip = mlirStringRefCreateFromCString("");
  if (status == 0)
    status = refused(context, options, "target cuda without a chip");
  options.cudaChip = mlirStringRefCreateFromCString("sm_xx");
  if (status == 0)
    status = refused(context, options, "target cuda with an unknown chip");
  return status;
}

/* Appends printed IR to a growing buffer. */
typedef struct Text {
  char *data;
  size_t length;
} Text;
static void countBrackets(MlirStringRef piece, void *userData) {
  long *count = (long *)userData;
  for (size_t i = 0; i < piece.length; ++i)
    *count += piece.data[i] == '[' || piece.data[i] == ']';
}

static void appendText(MlirStringRef piece, void *userData) {
  Text *t = (Text *)userData;
  char *grown = (char *)realloc(t->data, t->length + piece.length + 1);
  if (!grown)
    return;
  memcpy(grown + t->length, piece.data, piece.length);
  t->length += piece.length;
  grown[t->length] = 0;
  t->data = grown;
}

/* How often `needle` occurs in kModule lowered with `options`; -1 when the
   lowering fails. */
static long countAfterLowering(MlirContext context,
                               MuonLLVMPipelineOptions options,
                               const char *needle) {
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(kModule));
  Text text = {NULL, 0};
  long count = -1;
  if (mlirLogicalResultIsSuccess(muonRunMuonToLLVMPipeline(
          mlirModuleGetOperation(module), options, NULL, NULL))) {
    mlirOperationPrint(mlirModuleGetOperation(module), appendText, &text);
    count = 0;
    for (const char *at = text.data; at && (at = strstr(at, needle)); ++at)
      ++count;
  }
  free(text.data);
  mlirModuleDestroy(module);
  return count;
}

/* muonStepReportWithOptions: schedule estimates with stacked rounds, the
   same as JSON, and a negative stack bound refused. */
static int reportWithOptions(MlirContext context) {
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(kModule));
  MlirOperation op = mlirModuleGetOperation(module);
  MuonStepReportOptions options = muonStepReportOptionsDefault();
  Text json = {NULL, 0};
  int status = 0;
  if (options.json || options.schedules || options.nsStackBytes != 0) {
    fprintf(stderr, "the report defaults are not muonStepReport's\n");
    status = 1;
  }
  options.schedules = true;
  options.nsStackBytes = 4096;
  if (status == 0 && mlirLogicalResultIsFailure(muonStepReportWithOptions(
                         op, options, printText, stdout))) {
    fprintf(stderr, "muonStepReportWithOptions failed\n");
    status = 1;
  }
  options.json = true;
  if (status == 0 && mlirLogicalResultIsFailure(muonStepReportWithOptions(
                         op, options, appendText, &json))) {
    fprintf(stderr, "muonStepReportWithOptions (json) failed\n");
    status = 1;
  } else if (status == 0 && !json.data) {
    fprintf(stderr, "muonStepReportWithOptions (json) wrote nothing\n");
    status = 1;
  } else if (status == 0) {
    printf("json: %s, %s\n",
           strstr(json.data, "\"schedule_estimates\"") ? "estimates"
                                                        : "no estimates",
           strstr(json.data, "\"ns_stack_bytes\": 4096") ? "stack bound 4096"
                                                         : "no stack bound");
  }
  options.nsStackBytes = -1;
  if (status == 0 && mlirLogicalResultIsSuccess(muonStepReportWithOptions(
                         op, options, printText, stdout))) {
    fprintf(stderr, "nsStackBytes -1 was accepted by the report\n");
    status = 1;
  } else if (status == 0) {
    printf("report with nsStackBytes -1: refused\n");
  }
  free(json.data);
  mlirModuleDestroy(module);
  return status;
}

/* placeDeallocations reaches the pipeline: MLIR's ownership-based
   deallocation frees the step's buffers at the end of their block, in fewer
   runtime calls than one free after each buffer's last use. */
static int optionsReachThePipeline(MlirContext context) {
  MuonLLVMPipelineOptions options = muonLLVMPipelineOptionsDefault();
  long placed = countAfterLowering(context, options, "muon_rt_buffers_free");
  options.placeDeallocations = false;
  long ownership =
      countAfterLowering(context, options, "muon_rt_buffers_free");
  if (placed < 0 || ownership < 0 || ownership >= placed) {
    fprintf(stderr,
            "placeDeallocations = false did not change the frees (%ld, "
            "%ld)\n",
            placed, ownership);
    return 1;
  }
  printf("placeDeallocations = false: fewer free calls\n");
  return 0;
}

/* muonRunMuonToLLVMPipeline: the same lowering in one call (a fresh parse of
   the module), and the unknown target refused with its message. */
static int runPipeline(MlirContext context) {
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(kModule));
  MuonLLVMPipelineOptions options = muonLLVMPipelineOptionsDefault();
  Message error = {{0}, 0};
  int status = 0;
  if (mlirLogicalResultIsFailure(muonRunMuonToLLVMPipeline(
          mlirModuleGetOperation(module), options, collectMessage, &error))) {
    fprintf(stderr, "muonRunMuonToLLVMPipeline failed: %s\n", error.text);
    status = 1;
  } else {
    printf("run: lowered, %s\n",
           muonModuleNumSteps(mlirModuleGetOperation(module)) == 0
               ? "no muon.step left"
               : "a muon.step left");
  }
  options.target = mlirStringRefCreateFromCString("gpu");
  if (status == 0 &&
      mlirLogicalResultIsSuccess(muonRunMuonToLLVMPipeline(
          mlirModuleGetOperation(module), options, collectMessage, &error))) {
    fprintf(stderr, "target gpu was accepted by muonRunMuonToLLVMPipeline\n");
    status = 1;
  } else if (status == 0) {
    printf("run %s\n", error.text);
  }
  mlirModuleDestroy(module);
  /* An op other than a module is refused with a message, not silently. */
  module = mlirModuleCreateParse(context,
                                 mlirStringRefCreateFromCString(kModule));
  options.target = mlirStringRefCreateFromCString("cpu");
  Message notModule = {{0}, 0};
  MlirOperation first =
      mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  if (status == 0 &&
      mlirLogicalResultIsSuccess(muonRunMuonToLLVMPipeline(
          first, options, collectMessage, &notModule))) {
    fprintf(stderr, "a non-module op was accepted\n");
    status = 1;
  } else if (status == 0) {
    printf("run on an op: %s\n", notModule.text);
  }
  mlirModuleDestroy(module);
  return status;
}

struct DeepParse {
  MlirContext context;
  const char *text;
};

/* Parses, prints (counting the brackets) and destroys a module. */
static int parsePrintDestroy(void *userData) {
  struct DeepParse *d = (struct DeepParse *)userData;
  MlirModule module = mlirModuleCreateParse(
      d->context, mlirStringRefCreateFromCString(d->text));
  long brackets = 0;
  if (mlirModuleIsNull(module))
    return -1;
  mlirOperationPrint(mlirModuleGetOperation(module), countBrackets, &brackets);
  mlirModuleDestroy(module);
  return (int)brackets;
}

/* Text nested 100,000 levels deep (a main thread's 8 MiB stack takes
   about 7000) through muonRunOnLargeStack. */
static int deepNesting(MlirContext context) {
  enum { kDepth = 100000 };
  const char *head = "func.func @f() attributes {a = ";
  const char *tail = "} {\n  return\n}";
  size_t n = strlen(head) + 2 * kDepth + strlen(tail) + 1;
  char *text = (char *)malloc(n);
  struct DeepParse d;
  int brackets;
  strcpy(text, head);
  memset(text + strlen(head), '[', kDepth);
  memset(text + strlen(head) + kDepth, ']', kDepth);
  strcpy(text + strlen(head) + 2 * kDepth, tail);
  d.context = context;
  d.text = text;
  brackets = muonRunOnLargeStack(
      mlirStringRefCreateFromCString("muon-capi-test"), parsePrintDestroy, &d);
  free(text);
  printf("deep: %d brackets printed\n", brackets);
  return brackets == 2 * kDepth ? 0 : 1;
}

/* A null executable (what a failed muonExecutableCreate returns) is
 * refused by muonExecutableInvoke with a message and has no role table. */
static int nullExecutable(void) {
  MuonExecutable none = {NULL};
  Message error = {{0}, 0};
  intptr_t size = 7;
  const int64_t *table = muonExecutableRoleTable(none, &size);
  if (table != NULL || size != 0) {
    fprintf(stderr, "a null executable has a role table\n");
    return 1;
  }
  if (!mlirLogicalResultIsFailure(
          muonExecutableInvoke(none, 0, NULL, collectMessage, &error))) {
    fprintf(stderr, "a null executable was invoked\n");
    return 1;
  }
  printf("null executable: %s\n", error.text);
  muonExecutableDestroy(none);
  return 0;
}

/* Collects a diagnostic's text into a Message. */
static MlirLogicalResult collectDiagnostic(MlirDiagnostic diagnostic,
                                           void *userData) {
  Message *message = (Message *)userData;
  message->length = 0;
  message->text[0] = '\0';
  mlirDiagnosticPrint(diagnostic, collectMessage, userData);
  return mlirLogicalResultSuccess();
}

/* Null handles and NULL output pointers are refused, never dereferenced:
 * a null operation (what muonModuleGetStep returns past the last step) is
 * reported on stderr (it has no context to carry a diagnostic), a NULL
 * output pointer as a diagnostic on the step. */
static int nullHandles(MlirContext context) {
  MlirOperation none = {NULL};
  Message error = {{0}, 0};
  MuonExecutableOptions exeOptions = muonExecutableOptionsDefault();
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kModule));
  MlirOperation step = muonModuleGetStep(mlirModuleGetOperation(module), 0);
  MlirDiagnosticHandlerID handler;
  int64_t shape[2], offsets[2];
  int status = 0;
  if (muonModuleNumSteps(none) != -1 || muonStepNumParams(none) != -1 ||
      !mlirOperationIsNull(muonModuleGetStep(none, 0)) ||
      muonStepNumRanks(none) != -1 ||
      mlirLogicalResultIsSuccess(muonStepPlan(none, 0, NULL, NULL)) ||
      mlirLogicalResultIsSuccess(muonStepReport(none, NULL, NULL)) ||
      mlirLogicalResultIsSuccess(muonRunMuonToLLVMPipeline(
          none, muonLLVMPipelineOptionsDefault(), collectMessage, &error))) {
    fprintf(stderr, "a null operation was accepted\n");
    status = 1;
  } else {
    printf("null operation: %s\n", error.text);
  }
  handler = mlirContextAttachDiagnosticHandler(context, collectDiagnostic,
                                               &error, NULL);
  if (status == 0 &&
      mlirLogicalResultIsSuccess(muonStepParamShape(step, 0, NULL))) {
    fprintf(stderr, "a NULL shape was accepted\n");
    status = 1;
  } else if (status == 0) {
    printf("NULL output: %s\n", error.text);
  }
  if (status == 0 &&
      mlirLogicalResultIsSuccess(muonStepLocalShard(
          step, 0, MuonTensorParam, 0, shape, offsets, NULL, shape, offsets))) {
    fprintf(stderr, "a NULL flattened was accepted\n");
    status = 1;
  } else if (status == 0) {
    printf("NULL output: %s\n", error.text);
  }
  mlirContextDetachDiagnosticHandler(context, handler);
  /* A negative library count is refused before anything is compiled. */
  error.length = 0;
  error.text[0] = '\0';
  exeOptions.numSharedLibraries = -1;
  if (status == 0 &&
      muonExecutableCreate(module, mlirStringRefCreateFromCString("step"),
                           exeOptions, collectMessage, &error)
              .ptr != NULL) {
    fprintf(stderr, "a negative library count was accepted\n");
    status = 1;
  } else if (status == 0) {
    printf("libraries: %s\n", error.text);
  }
  /* A null module (a failed parse) is refused, not read. */
  error.length = 0;
  error.text[0] = '\0';
  if (status == 0 &&
      muonExecutableCreate(
          (MlirModule){NULL}, mlirStringRefCreateFromCString("step"),
          muonExecutableOptionsDefault(), collectMessage, &error)
              .ptr != NULL) {
    fprintf(stderr, "a null module was accepted\n");
    status = 1;
  } else if (status == 0) {
    printf("null module: %s\n", error.text);
  }
  mlirModuleDestroy(module);
  return status;
}

static int run(MlirContext context) {
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(kModule));
  MlirOperation step;
  intptr_t numSteps;
  int status = 0;
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "cannot parse the module\n");
    return 1;
  }
  numSteps = muonModuleNumSteps(mlirModuleGetOperation(module));
  printf("steps: %ld\n", (long)numSteps);
  step = muonModuleGetStep(mlirModuleGetOperation(module), 0);
  if (numSteps != 1 || mlirOperationIsNull(step) ||
      !mlirOperationIsNull(
          muonModuleGetStep(mlirModuleGetOperation(module), 1))) {
    fprintf(stderr, "expected exactly one muon.step\n");
    status = 1;
  } else if (muonStepNumParams(step) != 1) {
    fprintf(stderr, "expected one parameter, got %ld\n",
            (long)muonStepNumParams(step));
    status = 1;
  } else if (mlirLogicalResultIsFailure(muonStepReport(
                 mlirModuleGetOperation(module), printText, stdout))) {
    fprintf(stderr, "muonStepReport failed\n");
    status = 1;
  } else if (mlirLogicalResultIsFailure(
                 muonStepPlan(step, 0, printPlanLine, NULL))) {
    fprintf(stderr, "muonStepPlan failed\n");
    status = 1;
  } else {
    status = lower(context, module);
  }
  mlirModuleDestroy(module);
  if (status == 0)
    status = badOptions(context);
  if (status == 0)
    status = runPipeline(context);
  if (status == 0)
    status = reportWithOptions(context);
  if (status == 0)
    status = optionsReachThePipeline(context);
  if (status == 0)
    status = deepNesting(context);
  if (status == 0)
    status = nullExecutable();
  if (status == 0)
    status = nullHandles(context);
  return status;
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  MlirContext context;
  int status;
  muonRegisterAllDialects(registry);
  context = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
  mlirDialectRegistryDestroy(registry);
  status = run(context);
  mlirContextDestroy(context);
  fflush(stdout);
  return status;
}
