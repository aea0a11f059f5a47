// The daemon's standard services, spoken to as any gRPC tool would (grpc_health_probe, grpcurl):
// health checking says SERVING and reflection lists tune's services.
#include <gtest/gtest.h>

#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "tests/e2e/harness.h"

namespace tune::testing {
namespace {

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes.data(), bytes.size());
  return grpc::ByteBuffer(&slice, 1);
}

std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// Waits for the next completion and checks it is `tag` and succeeded.
bool Next(grpc::CompletionQueue& cq, intptr_t tag) {
  void* got = nullptr;
  bool ok = false;
  return cq.Next(&got, &ok) && ok && reinterpret_cast<intptr_t>(got) == tag;
}

TEST(ServiceTest, DaemonServesHealthCheckingAndReflection) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"));
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  grpc::GenericStub stub(
      grpc::CreateChannel((*daemon)->address(), grpc::InsecureChannelCredentials()));
  grpc::CompletionQueue cq;

  {  // grpc.health.v1.Health/Check with service "" (an empty HealthCheckRequest).
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    grpc::ByteBuffer request = Buffer("");
    auto call = stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request, &cq);
    call->StartCall();
    grpc::ByteBuffer response;
    grpc::Status status;
    call->Finish(&response, &status, reinterpret_cast<void*>(1));
    ASSERT_TRUE(Next(cq, 1));
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(Bytes(response), std::string("\x08\x01", 2));  // status: SERVING
  }
  {  // grpc.reflection.v1alpha: list_services "*".
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    auto call = stub.PrepareCall(
        &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
    call->StartCall(reinterpret_cast<void*>(2));
    ASSERT_TRUE(Next(cq, 2));
    call->Write(Buffer(std::string("\x3a\x01*", 3)), reinterpret_cast<void*>(3));
    ASSERT_TRUE(Next(cq, 3));
    grpc::ByteBuffer response;
    call->Read(&response, reinterpret_cast<void*>(4));
    ASSERT_TRUE(Next(cq, 4));
    std::string listed = Bytes(response);
    EXPECT_NE(listed.find("tune.v1.Tuner"), std::string::npos);
    EXPECT_NE(listed.find("tune.v1.WorkerLink"), std::string::npos);
    EXPECT_NE(listed.find("grpc.health.v1.Health"), std::string::npos);
    call->WritesDone(reinterpret_cast<void*>(5));
    ASSERT_TRUE(Next(cq, 5));
    grpc::Status status;
    call->Finish(&status, reinterpret_cast<void*>(6));
    ASSERT_TRUE(Next(cq, 6));
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
}

}  // namespace
}  // namespace tune::testing
