/* mailbox.c: scaling a mailbox profile (see mailbox.h). */
#include "core/mailbox.h"

static int scaled_count(int n, double scale)
{
	if (n <= 0)
		return 0;
	int v = (int)(n * scale + 0.5);
	return v < 1 ? 1 : v;
}

void mb_mailbox_profile_scale(const struct mb_mailbox_profile *in, double scale,
			      struct mb_mailbox_profile *out)
{
	out->inbox_messages = scaled_count(in->inbox_messages, scale);
	out->deleted_items_messages = scaled_count(in->deleted_items_messages, scale);
	out->new_folders = in->new_folders;
	out->messages_per_folder = scaled_count(in->messages_per_folder, scale);
	out->calendar_appointments = scaled_count(in->calendar_appointments, scale);
	out->contacts = scaled_count(in->contacts, scale);
	out->avg_message_kb = in->avg_message_kb;
}

int mb_mailbox_profile_items(const struct mb_mailbox_profile *p)
{
	return p->inbox_messages + p->deleted_items_messages +
	       p->new_folders * p->messages_per_folder + p->calendar_appointments + p->contacts;
}
