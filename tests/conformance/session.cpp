#include "session.h"

#include <iostream>

namespace fa2::test {

Session::~Session() { fa2_destroy(handle_); }

bool Session::open(fa2_backend_t backend, std::string &why) {
  memory_ = memory_for(backend);
  if (!memory_->present()) {
    why = memory_->why_absent();
  } else {
    const fa2_status_t status = fa2_create(&handle_, backend, memory_->device());
    if (status == FA2_SUCCESS) return true;
    // Only "no such hardware here" is a skip; any other failure is a bug.
    EXPECT_TRUE(status == FA2_ERROR_NO_DEVICE || status == FA2_ERROR_UNSUPPORTED_DEVICE)
        << "fa2_create(" << fa2_backend_name(backend) << ") failed: " << fa2_status_string(status);
    why = std::string("fa2_create: ") + fa2_status_string(status);
  }
  std::cerr << "[ WARNING  ] backend '" << fa2_backend_name(backend)
            << "' tests are SKIPPED: " << why << "\n";
  return false;
}

}  // namespace fa2::test
