// A backend opened for one test: its DeviceMemory and an fa2 handle. A
// backend whose device is absent makes the test SKIP, loudly and by name.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "device_memory.h"
#include "fa2/fa2.h"

namespace fa2::test {

class Session {
 public:
  Session() = default;
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session();
  // False, with the reason, when the backend cannot run on this machine.
  bool open(fa2_backend_t backend, std::string &why);
  DeviceMemory &memory() const { return *memory_; }
  fa2_handle_t handle() const { return handle_; }
  void *stream() const { return memory_->stream(); }

 private:
  std::unique_ptr<DeviceMemory> memory_;
  fa2_handle_t handle_ = nullptr;
};

// Base fixture for tests parameterised by something with a `backend` member.
template <class Param>
class OnBackend : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    std::string why;
    if (!session_.open(this->GetParam().backend, why))
      GTEST_SKIP() << "SKIPPED: backend '" << fa2_backend_name(this->GetParam().backend)
                   << "' cannot run here: " << why;
  }
  Session session_;
};

}  // namespace fa2::test
