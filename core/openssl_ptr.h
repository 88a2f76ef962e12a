// OpenSSL objects as owning pointers, and PEM text read as OpenSSL reads a
// file: what core/tls.cc and core/tls_certs.cc share.
#ifndef PSTRAIN_CORE_OPENSSL_PTR_H_
#define PSTRAIN_CORE_OPENSSL_PTR_H_

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace pstrain {
namespace openssl {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

// A read-only BIO over `pem`, which must outlive it.
inline Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace openssl
}  // namespace pstrain

#endif  // PSTRAIN_CORE_OPENSSL_PTR_H_
