#define _GNU_SOURCE
/* proc_times PORT: a one-connection line server whose bug hangs on the
 * kernel's clock as /proc shows it, for cmc's tests of its control of
 * /proc's times.
 *
 * "SET a\n" sets cmc_state[0]. "SET b\n" reads /proc/uptime (with stdio:
 * read()), the start time of /proc/self/stat (with read()) and the boot
 * time of /proc/stat, keeps them in seen[], sets cmc_state[1], and loses
 * the update of a (clears cmc_state[0]) when the hundredths of the uptime
 * or the start time in ticks are odd. Replies "OK\n" to every line, or
 * "LOST\n" when it lost the update.
 *
 * At start it lists its addresses over NETLINK_ROUTE, as dnsmasq does
 * (each reply's size peeked with MSG_PEEK | MSG_TRUNC, then taken with
 * recvmsg), and keeps the creation and update times of the last one
 * (IFA_CACHEINFO) in seen[3] and seen[4]; then its links, taken with
 * recvmmsg, and keeps the packets the last one received (IFLA_STATS64) in
 * seen[5].
 */
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

unsigned char cmc_state[2];
/* Hundredths of the uptime, the start time, the boot time; an address's
 * creation and update times; a link's packets received. */
long long seen[6];

static long long uptime_hundredths(void) {
  FILE *file = fopen("/proc/uptime", "r");
  long long seconds = 0;
  int hundredths = 0;
  if (file == NULL || fscanf(file, "%lld.%d", &seconds, &hundredths) != 2)
    exit(3);
  fclose(file);
  return seconds * 100 + hundredths;
}

/* Field 22 of /proc/self/stat, after the name in parentheses. */
static long long start_time(void) {
  char text[1024];
  const int fd = open("/proc/self/stat", O_RDONLY);
  const ssize_t got = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
  if (got <= 0)
    exit(3);
  close(fd);
  text[got] = '\0';
  const char *field = strrchr(text, ')');
  for (int k = 2; field != NULL && k < 22; ++k)
    field = strchr(field + 1, ' ');
  if (field == NULL)
    exit(3);
  return strtoll(field + 1, NULL, 10);
}

static long long boot_time(void) {
  FILE *file = fopen("/proc/stat", "r");
  char line[4096];
  long long btime = -1;
  while (file != NULL && fgets(line, sizeof line, file) != NULL)
    if (sscanf(line, "btime %lld", &btime) == 1)
      break;
  if (file == NULL || btime < 0)
    exit(3);
  fclose(file);
  return btime;
}

/* The cache information of the addresses in one batch of replies; 0 when
 * the dump is done. */
static int address_batch(int fd) {
  static char buffer[65536];
  const ssize_t size = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
  struct iovec vector = {buffer, sizeof buffer};
  struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1};
  if (size <= 0 || size > (ssize_t)sizeof buffer)
    exit(3);
  ssize_t got = recvmsg(fd, &message, 0);
  for (struct nlmsghdr *header = (struct nlmsghdr *)buffer;
       NLMSG_OK(header, got); header = NLMSG_NEXT(header, got)) {
    if (header->nlmsg_type == NLMSG_DONE || header->nlmsg_type == NLMSG_ERROR)
      return 0;
    struct ifaddrmsg *address = NLMSG_DATA(header);
    int left = IFA_PAYLOAD(header);
    for (struct rtattr *attribute = IFA_RTA(address); RTA_OK(attribute, left);
         attribute = RTA_NEXT(attribute, left))
      if (attribute->rta_type == IFA_CACHEINFO) {
        const struct ifa_cacheinfo *info = RTA_DATA(attribute);
        seen[3] = info->cstamp;
        seen[4] = info->tstamp;
      }
  }
  return 1;
}

/* The same for links, with recvmmsg. */
static int link_batch(int fd) {
  static char buffer[65536];
  struct iovec vector = {buffer, sizeof buffer};
  struct mmsghdr message = {.msg_hdr = {.msg_iov = &vector, .msg_iovlen = 1}};
  if (recvmmsg(fd, &message, 1, 0, NULL) != 1)
    exit(3);
  int got = (int)message.msg_len;
  for (struct nlmsghdr *header = (struct nlmsghdr *)buffer;
       NLMSG_OK(header, got); header = NLMSG_NEXT(header, got)) {
    if (header->nlmsg_type == NLMSG_DONE || header->nlmsg_type == NLMSG_ERROR)
      return 0;
    struct ifinfomsg *link = NLMSG_DATA(header);
    int left = (int)IFLA_PAYLOAD(header);
    for (struct rtattr *attribute = IFLA_RTA(link); RTA_OK(attribute, left);
         attribute = RTA_NEXT(attribute, left))
      if (attribute->rta_type == IFLA_STATS64) {
        struct rtnl_link_stats64 stats;
        memcpy(&stats, RTA_DATA(attribute), sizeof stats);
        seen[5] = (long long)stats.rx_packets;
      }
  }
  return 1;
}

static void dump(int fd, int type, unsigned char family) {
  struct {
    struct nlmsghdr header;
    struct rtgenmsg generic;
  } request = {{sizeof request, type, NLM_F_REQUEST | NLM_F_DUMP, 1, 0},
               {family}};
  if (send(fd, &request, sizeof request, 0) != sizeof request)
    exit(3);
}

static void address_times(void) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    exit(3);
  dump(fd, RTM_GETADDR, AF_INET);
  while (address_batch(fd))
    ;
  dump(fd, RTM_GETLINK, AF_UNSPEC);
  while (link_batch(fd))
    ;
  close(fd);
}

static const char *handle(const char *line) {
  if (strcmp(line, "SET a") == 0) {
    cmc_state[0] = 1;
    return "OK\n";
  }
  if (strcmp(line, "SET b") == 0) {
    seen[0] = uptime_hundredths();
    seen[1] = start_time();
    seen[2] = boot_time();
    cmc_state[1] = 1;
    if (seen[0] % 2 == 1 || seen[1] % 2 == 1) {
      cmc_state[0] = 0;
      return "LOST\n";
    }
    return "OK\n";
  }
  return "ERR\n";
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  address_times();
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)atoi(argv[1]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0)
    return 1;
  const int client = accept(listener, NULL, NULL);
  char line[256];
  size_t used = 0;
  while (1) {
    const ssize_t got = read(client, line + used, sizeof line - 1 - used);
    if (got <= 0)
      return 0;
    used += (size_t)got;
    char *end;
    while ((end = memchr(line, '\n', used)) != NULL) {
      *end = '\0';
      const char *reply = handle(line);
      write(client, reply, strlen(reply));
      used -= (size_t)(end + 1 - line);
      memmove(line, end + 1, used);
    }
    if (used == sizeof line - 1)
      used = 0;
  }
}
