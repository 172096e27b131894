#ifndef CCURL_H
#define CCURL_H

#include <curl/curl.h>

/* Typed, non-variadic wrappers around libcurl's variadic entry points, which
   Swift cannot call directly. Each forwards to curl_easy_setopt /
   curl_easy_getinfo / curl_multi_setopt with the argument type the option
   documents. */

typedef size_t (*ccurl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*ccurl_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
                                       curl_off_t ultotal, curl_off_t ulnow);
typedef int (*ccurl_seek_callback)(void *userp, curl_off_t offset, int origin);

CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback cb);
CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, ccurl_xferinfo_callback cb);
CURLcode ccurl_easy_setopt_seek_callback(CURL *handle, ccurl_seek_callback cb);

CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode ccurl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value);
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value);
CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/* CURL_WRITEFUNC_PAUSE and friends are macros Swift may not import. */
size_t ccurl_writefunc_pause(void);
size_t ccurl_readfunc_abort(void);

/* Reads finished transfers off the multi handle: returns 1 and fills `easy`
   and `result` for the next CURLMSG_DONE message, 0 when none is left. */
int ccurl_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result);

/* curl_easy_pause with the CURLPAUSE_* macros spelt out. */
CURLcode ccurl_easy_pause_receive(CURL *handle);
CURLcode ccurl_easy_continue(CURL *handle);

/* CURL_HTTP_VERSION_2TLS as a long. */
long ccurl_http_version_2tls(void);

#endif
