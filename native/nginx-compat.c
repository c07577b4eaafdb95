/*
 * ingress-rx's in-process answers to "would NGINX accept this?", from the very libraries Debian's
 * NGINX links: PCRE2 (libpcre2-8, linked) for regular expressions, and OpenSSL (libssl.so.3,
 * opened with RTLD_DEEPBIND, because Node carries its own OpenSSL and exports its symbols) for
 * cipher and curve lists, CA bundles, CRLs and DH parameters. Built by scripts/setup.sh; loaded
 * by src/model/checks/native.ts.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <node_api.h>

#define CHECK(call) do { if ((call) != napi_ok) return NULL; } while (0)

/* A UTF-8 string argument in a malloc'd buffer (NUL-terminated), or NULL. */
static char *string_arg(napi_env env, napi_value v, size_t *len_out) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a string");
    return NULL;
  }
  char *buf = malloc(len + 1);
  if (buf == NULL) return NULL;
  napi_get_value_string_utf8(env, v, buf, len + 1, &len);
  if (len_out) *len_out = len;
  return buf;
}

/*
 * pcreCompile(pattern, caseless) → null when PCRE2 compiles it as ngx_regex_compile does
 * (options: PCRE2_CASELESS or none, default compile context), else [message, offset];
 * on success with named groups, an array of their names.
 */
static napi_value pcre_compile_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t len;
  char *pattern = string_arg(env, argv[0], &len);
  if (pattern == NULL) return NULL;
  bool caseless = false;
  napi_get_value_bool(env, argv[1], &caseless);

  int errcode;
  PCRE2_SIZE erroff;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR) pattern, len, caseless ? PCRE2_CASELESS : 0, &errcode, &erroff, NULL);
  free(pattern);
  if (re == NULL) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(errcode, msg, sizeof msg);
    napi_value m, off;
    CHECK(napi_create_array_with_length(env, 2, &result));
    CHECK(napi_create_string_utf8(env, (const char *) msg, NAPI_AUTO_LENGTH, &m));
    CHECK(napi_create_double(env, (double) erroff, &off));
    CHECK(napi_set_element(env, result, 0, m));
    CHECK(napi_set_element(env, result, 1, off));
    return result;
  }
  uint32_t count = 0, entry = 0;
  PCRE2_SPTR table = NULL;
  pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count);
  if (count == 0) {
    pcre2_code_free(re);
    CHECK(napi_get_null(env, &result));
    return result;
  }
  pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &entry);
  pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
  CHECK(napi_create_object(env, &result));
  napi_value names;
  CHECK(napi_create_array_with_length(env, count, &names));
  for (uint32_t i = 0; i < count; i++) {
    napi_value name;
    CHECK(napi_create_string_utf8(env, (const char *) table + i * entry + 2, NAPI_AUTO_LENGTH, &name));
    CHECK(napi_set_element(env, names, i, name));
  }
  pcre2_code_free(re);
  CHECK(napi_set_named_property(env, result, "names", names));
  return result;
}

/*
 * pcreWithinLimit(pattern, caseless, subject, limit) → true when PCRE2 (interpreted, as NGINX
 * runs a location's regex without pcre_jit) matches or fails to match `subject` within `limit`
 * backtracking steps, false when it gives up (match, depth or heap limit), null when the pattern
 * does not compile.
 */
static napi_value pcre_within_limit_js(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4], result;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t plen, slen;
  char *pattern = string_arg(env, argv[0], &plen);
  if (pattern == NULL) return NULL;
  char *subject = string_arg(env, argv[2], &slen);
  if (subject == NULL) { free(pattern); return NULL; }
  bool caseless = false;
  napi_get_value_bool(env, argv[1], &caseless);
  double limit = 0;
  napi_get_value_double(env, argv[3], &limit);

  int errcode;
  PCRE2_SIZE erroff;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR) pattern, plen, caseless ? PCRE2_CASELESS : 0, &errcode, &erroff, NULL);
  free(pattern);
  if (re == NULL) {
    free(subject);
    CHECK(napi_get_null(env, &result));
    return result;
  }
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  pcre2_match_context *mc = pcre2_match_context_create(NULL);
  pcre2_set_match_limit(mc, (uint32_t) limit);
  int rc = pcre2_match(re, (PCRE2_SPTR) subject, slen, 0, PCRE2_NO_JIT, md, mc);
  pcre2_match_context_free(mc);
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  free(subject);
  bool within = !(rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT);
  CHECK(napi_get_boolean(env, within, &result));
  return result;
}

/* The few libssl/libcrypto functions used, resolved once from the system library. */
static struct {
  int loaded; /* 0 not tried, 1 ok, -1 failed */
  void *(*TLS_method)(void);
  void *(*SSL_CTX_new)(const void *);
  void (*SSL_CTX_free)(void *);
  int (*SSL_CTX_set_cipher_list)(void *, const char *);
  long (*SSL_CTX_ctrl)(void *, int, long, void *);
  void (*ERR_clear_error)(void);
  int (*OPENSSL_init_ssl)(unsigned long long, const void *);
  void *(*BIO_new_mem_buf)(const void *, int);
  int (*BIO_free)(void *);
  void *(*PEM_read_bio_Parameters)(void *, void **);
  long (*SSL_CTX_set0_tmp_dh_pkey)(void *, void *);
  void (*EVP_PKEY_free)(void *);
  void *(*PEM_X509_INFO_read_bio)(void *, void *, void *, void *);
  int (*OPENSSL_sk_num)(const void *);
  void *(*OPENSSL_sk_value)(const void *, int);
  void (*OPENSSL_sk_pop_free)(void *, void (*)(void *));
  void (*X509_INFO_free)(void *);
  void *(*SSL_CTX_get_ciphers)(const void *);
  const char *(*SSL_CIPHER_get_name)(const void *);
} ssl;

/* The first members of OpenSSL's public X509_INFO (x509.h). */
struct x509_info_head { void *x509; void *crl; };

#define SSL_CTRL_SET_GROUPS_LIST 92
#define OPENSSL_INIT_LOAD_CONFIG 0x00000040L

static int load_ssl(void) {
  if (ssl.loaded != 0) return ssl.loaded;
  ssl.loaded = -1;
  void *h = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (h == NULL) return -1;
#define SYM(name) if ((*(void **) &ssl.name = dlsym(h, #name)) == NULL) return -1
  SYM(TLS_method); SYM(SSL_CTX_new); SYM(SSL_CTX_free); SYM(SSL_CTX_set_cipher_list);
  SYM(SSL_CTX_ctrl); SYM(ERR_clear_error); SYM(OPENSSL_init_ssl); SYM(SSL_CTX_get_ciphers); SYM(SSL_CIPHER_get_name);
  /* libcrypto's, found through libssl's dependencies. */
  SYM(BIO_new_mem_buf); SYM(BIO_free); SYM(PEM_read_bio_Parameters); SYM(SSL_CTX_set0_tmp_dh_pkey);
  SYM(EVP_PKEY_free); SYM(PEM_X509_INFO_read_bio); SYM(OPENSSL_sk_num); SYM(OPENSSL_sk_value);
  SYM(OPENSSL_sk_pop_free); SYM(X509_INFO_free);
  /* As NGINX does at start: the system openssl.cnf applies. */
  ssl.OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL);
  ssl.loaded = 1;
  return 1;
}

/* The two string arguments of an OpenSSL check (the second's length in *len), once libssl is
 * loaded; 0 with a JS exception pending otherwise. The caller frees both. */
static int openssl_string_args(napi_env env, napi_callback_info info, char **first, char **second, size_t *len) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return 0;
  if (load_ssl() != 1) {
    napi_throw_error(env, NULL, "libssl.so.3 could not be loaded");
    return 0;
  }
  *first = string_arg(env, argv[0], NULL);
  if (*first == NULL) return 0;
  *second = string_arg(env, argv[1], len);
  if (*second == NULL) { free(*first); return 0; }
  return 1;
}

/* opensslAccepts(kind, list) → true/false as SSL_CTX_set_cipher_list / SSL_CTX_set1_curves_list
 * answer on a fresh context; throws when libssl.so.3 cannot be loaded. */
static napi_value openssl_accepts_js(napi_env env, napi_callback_info info) {
  napi_value result;
  char *kind, *list;
  if (!openssl_string_args(env, info, &kind, &list, NULL)) return NULL;
  void *ctx = ssl.SSL_CTX_new(ssl.TLS_method());
  int ok = 0;
  if (ctx != NULL) {
    if (strcmp(kind, "ciphers") == 0) ok = ssl.SSL_CTX_set_cipher_list(ctx, list) == 1;
    else if (strcmp(kind, "curves") == 0) ok = ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_GROUPS_LIST, 0, list) == 1;
    ssl.SSL_CTX_free(ctx);
  }
  ssl.ERR_clear_error();
  free(kind);
  free(list);
  CHECK(napi_get_boolean(env, ok, &result));
  return result;
}

/* Whether a PEM text loads as NGINX loads the file: `dhparam` as ssl_dhparam
 * (PEM_read_bio_Parameters, then SSL_CTX_set0_tmp_dh_pkey, which applies the security level of
 * the system openssl.cnf), `certificates` as ssl_client_certificate / proxy_ssl_trusted_certificate
 * and `crl` as ssl_crl (X509_load_cert_crl_file reads PEM_X509_INFO_read_bio: at least one
 * certificate, or CRL, and no unreadable block). */
static int pem_loads(const char *kind, const char *pem, size_t len) {
  void *bio = ssl.BIO_new_mem_buf(pem, (int) len);
  if (bio == NULL) return 0;
  int ok = 0;
  if (strcmp(kind, "dhparam") == 0) {
    void *dh = ssl.PEM_read_bio_Parameters(bio, NULL);
    void *ctx = dh != NULL ? ssl.SSL_CTX_new(ssl.TLS_method()) : NULL;
    if (ctx != NULL && ssl.SSL_CTX_set0_tmp_dh_pkey(ctx, dh) == 1) { ok = 1; dh = NULL; }
    if (dh != NULL) ssl.EVP_PKEY_free(dh);
    if (ctx != NULL) ssl.SSL_CTX_free(ctx);
  } else {
    void *infos = ssl.PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
    if (infos != NULL) {
      int certs = 0, crls = 0;
      for (int i = 0; i < ssl.OPENSSL_sk_num(infos); i++) {
        struct x509_info_head *info = ssl.OPENSSL_sk_value(infos, i);
        if (info->x509 != NULL) certs++;
        if (info->crl != NULL) crls++;
      }
      ok = strcmp(kind, "crl") == 0 ? crls > 0 : strcmp(kind, "certificates") == 0 ? certs > 0 : 0;
      ssl.OPENSSL_sk_pop_free(infos, ssl.X509_INFO_free);
    }
  }
  ssl.BIO_free(bio);
  return ok;
}

/* opensslLoads(kind, pem) → true/false (see pem_loads); throws when libssl.so.3 cannot be loaded. */
static napi_value openssl_loads_js(napi_env env, napi_callback_info info) {
  napi_value result;
  char *kind, *pem;
  size_t len = 0;
  if (!openssl_string_args(env, info, &kind, &pem, &len)) return NULL;
  int ok = len < 0x7fffffff && pem_loads(kind, pem, len);
  ssl.ERR_clear_error();
  free(kind);
  free(pem);
  CHECK(napi_get_boolean(env, ok, &result));
  return result;
}

/* opensslCipherNames(list) → the names of the ciphers SSL_CTX_set_cipher_list enables for the
 * list on a fresh context (TLS 1.3 suites included), [] when it refuses the list; throws when
 * libssl.so.3 cannot be loaded. */
static napi_value openssl_cipher_names_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result, name;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (load_ssl() != 1) {
    napi_throw_error(env, NULL, "libssl.so.3 could not be loaded");
    return NULL;
  }
  char *list = string_arg(env, argv[0], NULL);
  if (list == NULL) return NULL;
  CHECK(napi_create_array(env, &result));
  void *ctx = ssl.SSL_CTX_new(ssl.TLS_method());
  if (ctx != NULL) {
    if (ssl.SSL_CTX_set_cipher_list(ctx, list) == 1) {
      void *ciphers = ssl.SSL_CTX_get_ciphers(ctx);
      int n = ciphers != NULL ? ssl.OPENSSL_sk_num(ciphers) : 0;
      for (int i = 0; i < n; i++) {
        CHECK(napi_create_string_utf8(env, ssl.SSL_CIPHER_get_name(ssl.OPENSSL_sk_value(ciphers, i)), NAPI_AUTO_LENGTH, &name));
        CHECK(napi_set_element(env, result, (uint32_t) i, name));
      }
    }
    ssl.SSL_CTX_free(ctx);
  }
  ssl.ERR_clear_error();
  free(list);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "pcreCompile", NAPI_AUTO_LENGTH, pcre_compile_js, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "pcreCompile", fn));
  CHECK(napi_create_function(env, "pcreWithinLimit", NAPI_AUTO_LENGTH, pcre_within_limit_js, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "pcreWithinLimit", fn));
  CHECK(napi_create_function(env, "opensslAccepts", NAPI_AUTO_LENGTH, openssl_accepts_js, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "opensslAccepts", fn));
  CHECK(napi_create_function(env, "opensslLoads", NAPI_AUTO_LENGTH, openssl_loads_js, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "opensslLoads", fn));
  CHECK(napi_create_function(env, "opensslCipherNames", NAPI_AUTO_LENGTH, openssl_cipher_names_js, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "opensslCipherNames", fn));
  char version[64] = "";
  pcre2_config(PCRE2_CONFIG_VERSION, version);
  napi_value v;
  CHECK(napi_create_string_utf8(env, version, NAPI_AUTO_LENGTH, &v));
  CHECK(napi_set_named_property(env, exports, "pcreVersion", v));
  return exports;
}

NAPI_MODULE(nginx_compat, init)
