// The HTTP client's TLS success path, against a local TLS server whose certificate a
// CA made by this test signed: the handshake, certificate and host-name checks pass for
// the right name and CA, and fail for the wrong ones.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <gtest/gtest.h>

#include "net/http_client.h"
#include "support/run_sync.h"

namespace reins {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using testing::RunSync;

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;

Key NewKey() { return Key(EVP_EC_gen("P-256"), EVP_PKEY_free); }

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  ASSERT_NE(ext, nullptr);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `name` with `key`, signed by `issuer_key` (self-signed when
// `issuer` is null), valid for a day.
Cert Certificate(const char* name, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, bool ca) {
  Cert cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), ca ? 1 : 2);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(name), -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer != nullptr ? X509_get_subject_name(issuer) : subject);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  if (ca) {
    AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExtension(cert.get(), signer, NID_subject_alt_name, "DNS:localhost");
  }
  X509_sign(cert.get(), issuer_key, EVP_sha256());
  return cert;
}

std::string Pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string Pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

// A TLS server on 127.0.0.1 that answers every request with `{"ok":true}` until stopped.
class TlsServer {
 public:
  TlsServer(const std::string& cert_pem, const std::string& key_pem) : tls_(asio::ssl::context::tls_server) {
    tls_.use_certificate_chain(asio::buffer(cert_pem));
    tls_.use_private_key(asio::buffer(key_pem), asio::ssl::context::pem);
    acceptor_.open(tcp::v4());
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] {
      Accept();
      io_.run();
    });
  }
  ~TlsServer() {
    asio::post(io_, [this] { acceptor_.close(); });
    io_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) return;
      auto stream = std::make_shared<beast::ssl_stream<beast::tcp_stream>>(std::move(socket), tls_);
      stream->async_handshake(asio::ssl::stream_base::server, [stream](beast::error_code hec) {
        if (!hec) Serve(stream, std::make_shared<beast::flat_buffer>());
      });
      Accept();
    });
  }

  // Answers requests on one connection, kept alive, until the client closes it.
  using Stream = beast::ssl_stream<beast::tcp_stream>;
  static void Serve(std::shared_ptr<Stream> stream, std::shared_ptr<beast::flat_buffer> buffer) {
    auto req = std::make_shared<http::request<http::string_body>>();
    http::async_read(*stream, *buffer, *req, [stream, buffer, req](beast::error_code rec, size_t) {
      if (rec) return;
      auto res = std::make_shared<http::response<http::string_body>>(http::status::ok, 11);
      res->set(http::field::content_type, "application/json");
      res->body() = R"({"ok":true})";
      res->prepare_payload();
      http::async_write(*stream, *res, [stream, buffer, res](beast::error_code wec, size_t) {
        if (!wec) Serve(stream, buffer);
      });
    });
  }

  asio::io_context io_;
  asio::ssl::context tls_;
  tcp::acceptor acceptor_{io_};
  int port_ = 0;
  std::thread thread_;
};

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Key ca_key = NewKey(), server_key = NewKey();
    Cert ca = Certificate("reins test CA", ca_key.get(), nullptr, ca_key.get(), true);
    Cert leaf = Certificate("localhost", server_key.get(), ca.get(), ca_key.get(), false);
    ca_file_ = ::testing::TempDir() + "reins-test-ca-" + std::to_string(getpid()) + ".pem";
    FILE* f = std::fopen(ca_file_.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::string pem = Pem(ca.get());
    std::fwrite(pem.data(), 1, pem.size(), f);
    std::fclose(f);
    server_ = std::make_unique<TlsServer>(Pem(leaf.get()), Pem(server_key.get()));
  }
  void TearDown() override { std::remove(ca_file_.c_str()); }

  Result<HttpResponse> Get(const std::string& host, const std::string& ca_file) {
    HttpClient::Options options;
    options.ca_file = ca_file;
    HttpClient client(options);
    return RunSync(client.Send(GetOk(host)));
  }
  HttpRequest GetOk(const std::string& host) const {
    HttpRequest r;
    r.method = "GET";
    r.url = "https://" + host + ":" + std::to_string(server_->port()) + "/ok";
    return r;
  }

  std::string ca_file_;
  std::unique_ptr<TlsServer> server_;
};

TEST_F(TlsTest, AServerCertifiedByATrustedCaIsReached) {
  Result<HttpResponse> r = Get("localhost", ca_file_);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"ok":true})");
}

// The second request goes out on the kept-alive connection: the client waits for the
// answer on its socket, where the server's session tickets may have arrived first.
TEST_F(TlsTest, AKeptAliveConnectionAnswersAgain) {
  HttpClient::Options options;
  options.ca_file = ca_file_;
  HttpClient client(options);
  std::vector<std::string> bodies;
  auto twice = [&]() -> Task<void> {
    for (int i = 0; i < 2; ++i) {
      Result<HttpResponse> r = co_await client.Send(GetOk("localhost"));
      bodies.push_back(r.ok() ? r->body : r.status().message());
    }
  };
  RunSync(twice());
  EXPECT_EQ(bodies, (std::vector<std::string>{R"({"ok":true})", R"({"ok":true})"}));
  EXPECT_EQ(client.connections_opened(), 1);
}

TEST_F(TlsTest, AnUntrustedCaIsRefused) {
  Result<HttpResponse> r = Get("localhost", "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("TLS handshake"), std::string::npos) << r.status().message();
}

TEST_F(TlsTest, ANameTheCertificateDoesNotCoverIsRefused) {
  // The same listener, reached by its address: the certificate names only "localhost".
  Result<HttpResponse> r = Get("127.0.0.1", ca_file_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("TLS handshake"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace reins
