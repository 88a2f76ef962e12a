#include "core/tls_certs.h"

#include <arpa/inet.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "core/openssl_ptr.h"
#include "core/tls.h"

namespace pstrain {
namespace {

using openssl::Pkey;
using openssl::X509Ptr;

StatusOr<Pkey> NewKey() {
  Pkey key(EVP_EC_gen("P-256"));
  if (key == nullptr) return Internal(OpenSslErrors("EVP_EC_gen failed"));
  return key;
}

std::string Pem(int (*write)(BIO*, void*), void* object) {
  openssl::Bio bio(BIO_new(BIO_s_mem()));
  write(bio.get(), object);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, n);
}

std::string CertPem(X509* cert) {
  return Pem([](BIO* b, void* x) { return PEM_write_bio_X509(b, static_cast<X509*>(x)); }, cert);
}

std::string KeyPem(EVP_PKEY* key) {
  return Pem(
      [](BIO* b, void* k) {
        return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(k), nullptr, nullptr, 0, nullptr,
                                        nullptr);
      },
      key);
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return Internal(OpenSslErrors("extension " + value + " refused"));
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return OkStatus();
}

// A certificate for `key` named `name`, valid from now + from for `secs`.
StatusOr<X509Ptr> NewCert(EVP_PKEY* key, const std::string& name, long from, long secs) {
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), from);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), from + secs);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  return cert;
}

}  // namespace

StatusOr<CertAndKey> MakeCa(const std::string& name) {
  PS_ASSIGN_OR_RETURN(Pkey key, NewKey());
  PS_ASSIGN_OR_RETURN(X509Ptr cert, NewCert(key.get(), name, -60, 10L * 365 * 24 * 3600));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  PS_RETURN_IF_ERROR(
      AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE"));
  PS_RETURN_IF_ERROR(
      AddExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  PS_RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return Internal(OpenSslErrors("signing the CA failed"));
  }
  return CertAndKey{CertPem(cert.get()), KeyPem(key.get())};
}

StatusOr<CertAndKey> MakeCert(const CertAndKey& ca, const CertOptions& options) {
  X509Ptr ca_cert(
      PEM_read_bio_X509(openssl::MemoryBio(ca.cert_pem).get(), nullptr, nullptr, nullptr));
  Pkey ca_key(
      PEM_read_bio_PrivateKey(openssl::MemoryBio(ca.key_pem).get(), nullptr, nullptr, nullptr));
  if (ca_cert == nullptr || ca_key == nullptr) return InvalidArgument("MakeCert: not a CA's PEM");

  PS_ASSIGN_OR_RETURN(Pkey key, NewKey());
  PS_ASSIGN_OR_RETURN(X509Ptr cert, NewCert(key.get(), options.name, options.valid_from_secs,
                                            options.valid_for_secs));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  std::string sans;
  for (const std::string& host : options.hosts) {
    unsigned char addr[16];
    const bool ip =
        inet_pton(AF_INET, host.c_str(), addr) == 1 || inet_pton(AF_INET6, host.c_str(), addr) == 1;
    sans += (sans.empty() ? "" : ",") + std::string(ip ? "IP:" : "DNS:") + host;
  }
  PS_RETURN_IF_ERROR(AddExtension(cert.get(), ca_cert.get(), NID_basic_constraints, "CA:FALSE"));
  PS_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature"));
  PS_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth,clientAuth"));
  if (!sans.empty()) {
    PS_RETURN_IF_ERROR(AddExtension(cert.get(), ca_cert.get(), NID_subject_alt_name, sans));
  }
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return Internal(OpenSslErrors("signing the certificate failed"));
  }
  return CertAndKey{CertPem(cert.get()), KeyPem(key.get())};
}

}  // namespace pstrain
