/* error.c: messages and names of the error table (see error.h). */
#include "core/error.h"

#include <errno.h>

const char *mb_strerror(int code)
{
	switch (code) {
#define MB_X_MSG(name, value, msg)                                                                 \
	case value:                                                                                \
		return msg;
		MB_ERROR_TABLE(MB_X_MSG)
#undef MB_X_MSG
	}
	return "unknown error";
}

const char *mb_errname(int code)
{
	switch (code) {
#define MB_X_NAME(name, value, msg)                                                                \
	case value:                                                                                \
		return #name;
		MB_ERROR_TABLE(MB_X_NAME)
#undef MB_X_NAME
	}
	return "MB_E?";
}

int mb_from_errno(int err)
{
	switch (err) {
	case 0:
		return MB_OK;
	case ENOMEM:
		return MB_ENOMEM;
	case ENOSPC:
	case EDQUOT:
		return MB_ENOSPC;
	case EIO:
		return MB_EIO;
	case ENOENT:
		return MB_ENOTFOUND;
	case EEXIST:
		return MB_EEXIST;
	case EACCES:
	case EPERM:
		return MB_EACCES;
	case EINVAL:
		return MB_EINVAL;
	case EAGAIN:
		return MB_EAGAIN;
	case ETIMEDOUT:
		return MB_ETIMEDOUT;
	case EFBIG:
	case E2BIG:
		return MB_ETOOBIG;
	case EBUSY:
		return MB_EBUSY;
	case ERANGE:
		return MB_ERANGE;
	case EROFS:
		return MB_EROFS;
	case EMFILE:
	case ENFILE:
		return MB_EMFILE;
	case ECONNRESET:
	case EPIPE:
		return MB_ECLOSED;
	case EOPNOTSUPP:
		return MB_EUNSUPPORTED;
	default:
		return MB_ESYS;
	}
}
