/* tls.c: TLS sessions over memory BIOs (see tls.h for the states).  The
 * read BIO (rbio) holds the peer's ciphertext the caller fed, the write
 * BIO (wbio) the ciphertext OpenSSL produced for the caller to send
 * (SSL_set_bio(ssl, rbio, wbio)).  Errors come from OpenSSL's error
 * queue, which is cleared before each call so a message names this
 * session's failure. */
#include "core/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core/error.h"

enum { T_HANDSHAKE, T_OPEN, T_CLOSED, T_FAILED };

struct mb_tls_ctx {
	SSL_CTX *ssl;
	bool server;
	bool insecure;
};

struct mb_tls {
	SSL *ssl;
	BIO *rbio, *wbio; /* owned by ssl */
	int state;
	bool shut;
	char *early; /* plaintext written before the handshake ended */
	size_t nearly, capearly;
	char err[256];
};

/* The first error of OpenSSL's queue (and the verify result), into buf. */
static void ossl_error(SSL *ssl, const char *what, char *buf, size_t cap)
{
	unsigned long e = ERR_get_error();
	char reason[160] = "";
	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	long v = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
	if (ssl && v != X509_V_OK)
		snprintf(buf, cap, "%s: certificate verify failed: %s", what,
			 X509_verify_cert_error_string(v));
	else
		snprintf(buf, cap, "%s: %s", what,
			 reason[0] ? reason
				   : "the peer closed or sent "
				     "no TLS");
}

int mb_tls_ctx_client(const char *cafile, bool insecure, struct mb_tls_ctx **out, char *err,
		      size_t errlen)
{
	*out = NULL;
	ERR_clear_error();
	struct mb_tls_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return MB_ENOMEM;
	c->ssl = SSL_CTX_new(TLS_client_method());
	if (!c->ssl)
		goto fail;
	SSL_CTX_set_min_proto_version(c->ssl, TLS1_2_VERSION);
	c->insecure = insecure;
	if (insecure) {
		SSL_CTX_set_verify(c->ssl, SSL_VERIFY_NONE, NULL);
	} else {
		SSL_CTX_set_verify(c->ssl, SSL_VERIFY_PEER, NULL);
		int ok = cafile && *cafile ? SSL_CTX_load_verify_locations(c->ssl, cafile, NULL)
					   : SSL_CTX_set_default_verify_paths(c->ssl);
		if (ok != 1) {
			char what[300];
			snprintf(what, sizeof(what), "CA file %s",
				 cafile && *cafile ? cafile : "(the system's store)");
			ossl_error(NULL, what, err, errlen);
			SSL_CTX_free(c->ssl);
			free(c);
			return MB_ETLS;
		}
	}
	*out = c;
	return 0;
fail:
	ossl_error(NULL, "TLS context", err, errlen);
	free(c);
	return MB_ETLS;
}

int mb_tls_ctx_server(const char *certfile, const char *keyfile, struct mb_tls_ctx **out, char *err,
		      size_t errlen)
{
	*out = NULL;
	ERR_clear_error();
	struct mb_tls_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return MB_ENOMEM;
	c->server = true;
	c->ssl = SSL_CTX_new(TLS_server_method());
	if (!c->ssl || SSL_CTX_use_certificate_chain_file(c->ssl, certfile) != 1 ||
	    SSL_CTX_use_PrivateKey_file(c->ssl, keyfile, SSL_FILETYPE_PEM) != 1) {
		ossl_error(NULL, certfile, err, errlen);
		SSL_CTX_free(c->ssl);
		free(c);
		return MB_ETLS;
	}
	*out = c;
	return 0;
}

void mb_tls_ctx_destroy(struct mb_tls_ctx *ctx)
{
	if (!ctx)
		return;
	SSL_CTX_free(ctx->ssl);
	free(ctx);
}

int mb_tls_create(struct mb_tls_ctx *ctx, const char *host, struct mb_tls **out)
{
	*out = NULL;
	struct mb_tls *t = calloc(1, sizeof(*t));
	if (!t)
		return MB_ENOMEM;
	t->ssl = SSL_new(ctx->ssl);
	t->rbio = BIO_new(BIO_s_mem());
	t->wbio = BIO_new(BIO_s_mem());
	if (!t->ssl || !t->rbio || !t->wbio) {
		BIO_free(t->rbio);
		BIO_free(t->wbio);
		SSL_free(t->ssl);
		free(t);
		return MB_ENOMEM;
	}
	/* an empty read BIO means "more bytes needed", not end of file */
	BIO_set_mem_eof_return(t->rbio, -1);
	SSL_set_bio(t->ssl, t->rbio, t->wbio);
	if (ctx->server) {
		SSL_set_accept_state(t->ssl);
	} else {
		SSL_set_connect_state(t->ssl);
		if (host && *host) {
			unsigned char a[16];
			bool ip =
			    inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
			if (!ip)
				SSL_set_tlsext_host_name(t->ssl, host);
			if (!ctx->insecure) {
				X509_VERIFY_PARAM *vp = SSL_get0_param(t->ssl);
				if (ip)
					X509_VERIFY_PARAM_set1_ip_asc(vp, host);
				else
					SSL_set1_host(t->ssl, host);
			}
		}
	}
	t->state = T_HANDSHAKE;
	*out = t;
	return 0;
}

void mb_tls_destroy(struct mb_tls *t)
{
	if (!t)
		return;
	SSL_free(t->ssl); /* frees the BIOs */
	free(t->early);
	free(t);
}

int mb_tls_feed(struct mb_tls *t, const void *p, size_t len)
{
	while (len > 0) {
		int chunk = len > (1u << 30) ? 1 << 30 : (int)len;
		int n = BIO_write(t->rbio, p, chunk);
		if (n <= 0)
			return MB_ENOMEM;
		p = (const char *)p + n;
		len -= (size_t)n;
	}
	return 0;
}

static int fail(struct mb_tls *t, const char *what)
{
	if (t->state != T_FAILED)
		ossl_error(t->ssl, what, t->err, sizeof(t->err));
	t->state = T_FAILED;
	return MB_ETLS;
}

/* Write plaintext now (the session is open). */
static int put(struct mb_tls *t, const void *p, size_t len)
{
	while (len > 0) {
		size_t w = 0;
		ERR_clear_error();
		if (SSL_write_ex(t->ssl, p, len, &w) != 1)
			return fail(t, "TLS write");
		p = (const char *)p + w;
		len -= w;
	}
	return 0;
}

int mb_tls_step(struct mb_tls *t)
{
	if (t->state == T_FAILED)
		return MB_ETLS;
	if (t->state != T_HANDSHAKE)
		return 1;
	ERR_clear_error();
	int r = SSL_do_handshake(t->ssl);
	if (r == 1) {
		t->state = T_OPEN;
		if (t->nearly) {
			int rc = put(t, t->early, t->nearly);
			t->nearly = 0;
			if (rc)
				return rc;
		}
		return 1;
	}
	int e = SSL_get_error(t->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	return fail(t, "TLS handshake");
}

bool mb_tls_open(const struct mb_tls *t) { return t->state == T_OPEN; }

long mb_tls_read(struct mb_tls *t, void *buf, size_t cap)
{
	if (t->state == T_FAILED)
		return MB_ETLS;
	if (t->state == T_CLOSED)
		return MB_ECLOSED;
	if (t->state == T_HANDSHAKE) {
		int rc = mb_tls_step(t);
		if (rc <= 0)
			return rc;
	}
	size_t n = 0;
	ERR_clear_error();
	int r = SSL_read_ex(t->ssl, buf, cap, &n);
	if (r == 1)
		return (long)n;
	int e = SSL_get_error(t->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	if (e == SSL_ERROR_ZERO_RETURN) {
		t->state = T_CLOSED;
		return MB_ECLOSED;
	}
	return fail(t, "TLS read");
}

int mb_tls_write(struct mb_tls *t, const void *p, size_t len)
{
	if (t->state == T_FAILED)
		return MB_ETLS;
	if (t->shut || t->state == T_CLOSED)
		return MB_ECLOSED;
	if (t->state == T_OPEN)
		return put(t, p, len);
	if (t->nearly + len > t->capearly) {
		size_t nc = t->capearly ? t->capearly : 256;
		while (nc < t->nearly + len)
			nc *= 2;
		char *n = realloc(t->early, nc);
		if (!n)
			return MB_ENOMEM;
		t->early = n;
		t->capearly = nc;
	}
	memcpy(t->early + t->nearly, p, len);
	t->nearly += len;
	return 0;
}

void mb_tls_shutdown(struct mb_tls *t)
{
	if (t->shut || t->state != T_OPEN)
		return;
	t->shut = true;
	ERR_clear_error();
	(void)SSL_shutdown(t->ssl); /* queues close_notify in wbio */
	ERR_clear_error();
}

size_t mb_tls_out_pending(const struct mb_tls *t) { return BIO_ctrl_pending(t->wbio); }

size_t mb_tls_out_take(struct mb_tls *t, void *buf, size_t cap)
{
	size_t n = 0;
	if (cap == 0 || BIO_ctrl_pending(t->wbio) == 0)
		return 0;
	if (BIO_read_ex(t->wbio, buf, cap, &n) != 1)
		return 0;
	return n;
}

const char *mb_tls_error(const struct mb_tls *t) { return t->err[0] ? t->err : "no error"; }

void mb_tls_describe(const struct mb_tls *t, char *buf, size_t cap)
{
	const SSL_CIPHER *c = SSL_get_current_cipher(t->ssl);
	snprintf(buf, cap, "%s %s", SSL_get_version(t->ssl), c ? SSL_CIPHER_get_name(c) : "-");
}

/* ---- a self-signed certificate ---- */

static int add_ext(X509 *x, int nid, const char *value)
{
	X509V3_CTX v;
	X509V3_set_ctx_nodb(&v);
	X509V3_set_ctx(&v, x, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v, nid, value);
	if (!e)
		return -1;
	int ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok == 1 ? 0 : -1;
}

int mb_tls_selfsigned(const char *cn, const char *certfile, const char *keyfile, char *err,
		      size_t errlen)
{
	int rc = MB_ETLS;
	EVP_PKEY *key = NULL;
	X509 *x = NULL;
	FILE *f = NULL;
	ERR_clear_error();
	key = EVP_RSA_gen(2048);
	x = X509_new();
	if (!key || !x)
		goto out;
	X509_set_version(x, 2);
	unsigned char serial[8];
	FILE *ur = fopen("/dev/urandom", "rb");
	if (!ur || fread(serial, 1, sizeof(serial), ur) != sizeof(serial)) {
		if (ur)
			fclose(ur);
		goto out;
	}
	fclose(ur);
	serial[0] &= 0x7f;
	BIGNUM *bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x))) {
		BN_free(bn);
		goto out;
	}
	BN_free(bn);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 10L * 365 * 86400);
	X509_set_pubkey(x, key);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"mailbench lab",
				   -1, -1, 0);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, name);
	if (add_ext(x, NID_basic_constraints, "critical,CA:TRUE") ||
	    add_ext(x, NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") ||
	    add_ext(x, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1") ||
	    add_ext(x, NID_subject_key_identifier, "hash"))
		goto out;
	if (!X509_sign(x, key, EVP_sha256()))
		goto out;
	int fd = open(keyfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) != 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s: cannot write", keyfile);
		return MB_EIO;
	}
	if (PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) != 1) {
		fclose(f);
		goto out;
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: cannot write", keyfile);
		rc = MB_EIO;
		goto done;
	}
	f = fopen(certfile, "w");
	if (!f) {
		snprintf(err, errlen, "%s: cannot write", certfile);
		rc = MB_EIO;
		goto done;
	}
	if (PEM_write_X509(f, x) != 1) {
		fclose(f);
		goto out;
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: cannot write", certfile);
		rc = MB_EIO;
		goto done;
	}
	rc = 0;
	goto done;
out:
	ossl_error(NULL, "self-signed certificate", err, errlen);
done:
	X509_free(x);
	EVP_PKEY_free(key);
	return rc;
}
