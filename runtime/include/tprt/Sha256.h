//===- Sha256.h - SHA-256 of a model file ----------------------*- C++ -*-===//
//
// tp-compile writes the model's SHA-256 into the manifest; tp-run and the
// Python binding check it before loading weights. A deep model's file is
// hundreds of MB: OpenSSL's libcrypto hashes it with the CPU's SHA
// instructions (300 MB: 0.25 s), three times faster than a portable
// implementation such as LLVM's. Header-only, so that the compiler and the
// runtime share it without the compiler linking libtprt.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_SHA256_H
#define TPRT_SHA256_H

#include "llvm/Support/MemoryBuffer.h"

#include <openssl/evp.h>

#include <string>

namespace tprt {

/// The lower-case hex SHA-256 of the file at `path`; false (and `hex`
/// untouched) when it cannot be read.
inline bool sha256OfFile(const std::string &path, std::string &hex) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return false;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (!EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(),
                  nullptr))
    return false;
  static const char kDigits[] = "0123456789abcdef";
  hex.clear();
  for (unsigned i = 0; i < size; ++i) {
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 15];
  }
  return true;
}

} // namespace tprt

#endif // TPRT_SHA256_H
