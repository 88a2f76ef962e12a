// The checks a task makes of its TLS flags before it starts.
#include "core/tls.h"

#include <gtest/gtest.h>

#include "core/testing/status_assertions.h"
#include "core/tls_certs.h"

namespace pstrain {
namespace {

class TlsFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = MakeCa("pstrain test CA");
    ASSERT_TRUE(ca.ok()) << ca.status().ToString();
    ca_ = *ca;
  }
  TlsFiles Files(const CertAndKey& cert, const CertAndKey& ca) {
    return TlsFiles{cert.cert_pem, cert.key_pem, ca.cert_pem, ""};
  }
  CertAndKey Cert(const CertAndKey& ca, long from, long secs) {
    auto cert = MakeCert(ca, {"ps0", {"127.0.0.1", "localhost"}, from, secs});
    EXPECT_TRUE(cert.ok()) << cert.status().ToString();
    return *cert;
  }
  CertAndKey ca_;
};

TEST_F(TlsFilesTest, ACertificateTheCaSignedIsAccepted) {
  auto files = CheckTlsFiles(Files(Cert(ca_, -60, 3600), ca_));
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_NE(files->subject.find("CN=ps0"), std::string::npos) << files->subject;
  PS_EXPECT_OK(MakeServerSslCtx(*files));
  PS_EXPECT_OK(MakeClientSslCtx(*files));
}

TEST_F(TlsFilesTest, AnotherCasCertificateIsRefused) {
  auto other = MakeCa("another CA");
  PS_ASSERT_OK(other);
  auto files = CheckTlsFiles(Files(Cert(*other, -60, 3600), ca_));
  PS_ASSERT_CODE(files, Code::kInvalidArgument);
  EXPECT_NE(files.status().message().find("does not verify against --tls_ca"), std::string::npos)
      << files.status().ToString();
}

TEST_F(TlsFilesTest, AnExpiredCertificateIsRefused) {
  auto files = CheckTlsFiles(Files(Cert(ca_, -7200, 3600), ca_));
  PS_ASSERT_CODE(files, Code::kInvalidArgument);
  EXPECT_NE(files.status().message().find("expired"), std::string::npos)
      << files.status().ToString();
}

TEST_F(TlsFilesTest, AKeyOfAnotherCertificateIsRefused) {
  TlsFiles files = Files(Cert(ca_, -60, 3600), ca_);
  files.key_pem = Cert(ca_, -60, 3600).key_pem;
  auto checked = CheckTlsFiles(files);
  PS_ASSERT_CODE(checked, Code::kInvalidArgument);
  EXPECT_NE(checked.status().message().find("does not belong"), std::string::npos)
      << checked.status().ToString();
}

TEST_F(TlsFilesTest, TextThatIsNoCertificateIsRefusedNamingTheFlag) {
  TlsFiles files = Files(Cert(ca_, -60, 3600), ca_);
  files.ca_pem = "not a certificate";
  auto checked = CheckTlsFiles(files);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.status().message().find("--tls_ca"), std::string::npos)
      << checked.status().ToString();
  EXPECT_EQ(LoadTlsFiles("/nonexistent/cert.pem", "k", "c").status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
