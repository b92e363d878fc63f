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

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace tprt {

/// The lower-case hex SHA-256 of the file at `path`; false (and `hex`
/// untouched) when it cannot be read.
inline bool sha256OfFile(const std::string &path, std::string &hex) {
  // Read in blocks, not mapped: a mapped file's pages count in the
  // process's resident memory once hashed (a 300 MB model: 300 MB of
  // tp-compile's peak), and each costs a page fault.
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(
      std::fopen(path.c_str(), "rb"), std::fclose);
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX *)> ctx(EVP_MD_CTX_new(),
                                                          EVP_MD_CTX_free);
  if (!file || !ctx || !EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr))
    return false;
  std::vector<char> block(size_t(1) << 20);
  size_t n;
  while ((n = std::fread(block.data(), 1, block.size(), file.get())) > 0)
    if (!EVP_DigestUpdate(ctx.get(), block.data(), n))
      return false;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  if (std::ferror(file.get()) ||
      !EVP_DigestFinal_ex(ctx.get(), digest, &size))
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
