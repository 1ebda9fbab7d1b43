// DurableFiles: what of a directory tree survives a crash, on a temporary
// directory of the test's own (no target, no privileges).

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tracer/sandbox/durable_files.h"

namespace cmc::tracer {
namespace {
namespace fs = std::filesystem;

class DurableFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("durable_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string &name, const std::string &bytes) const {
    std::ofstream(root_ / name, std::ios::binary | std::ios::trunc) << bytes;
  }
  void append(const std::string &name, const std::string &bytes) const {
    std::ofstream(root_ / name, std::ios::binary | std::ios::app) << bytes;
  }
  [[nodiscard]] std::string read(const std::string &name) const {
    std::ifstream file(root_ / name, std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    return bytes.str();
  }
  [[nodiscard]] bool exists(const std::string &name) const {
    return fs::exists(root_ / name);
  }
  // fsync of the file or directory at name.
  void sync(DurableFiles &durable, const std::string &name) const {
    struct stat info {};
    ASSERT_EQ(stat((root_ / name).c_str(), &info), 0) << name;
    ASSERT_TRUE(durable.sync(info.st_dev, info.st_ino));
  }
  [[nodiscard]] DurableFiles record() const {
    auto durable = DurableFiles::record(root_.string());
    EXPECT_TRUE(durable) << durable.error().message;
    return std::move(*durable);
  }

  fs::path root_;
};

TEST_F(DurableFilesTest, AFileRevertsToItsLastSync) {
  write("log", "a\n");
  DurableFiles durable = record();
  append("log", "b\n");
  sync(durable, "log");
  append("log", "c\n");
  ASSERT_TRUE(durable.restore());
  EXPECT_EQ(read("log"), "a\nb\n");
}

TEST_F(DurableFilesTest, ANewFileNeverSyncedIsGone) {
  DurableFiles durable = record();
  write("new", "x");
  ASSERT_TRUE(durable.restore());
  EXPECT_FALSE(exists("new"));
}

// Its name is committed with the file, as a journaling file system does.
TEST_F(DurableFilesTest, ASyncedNewFileStays) {
  DurableFiles durable = record();
  fs::create_directory(root_ / "dir");
  write("dir/new", "x");
  sync(durable, "dir/new");
  append("dir/new", "y");
  ASSERT_TRUE(durable.restore());
  EXPECT_EQ(read("dir/new"), "x");
}

// A directory's fsync keeps its entries: a new file as it was at its own
// last sync (never: empty), a rename and an unlink.
TEST_F(DurableFilesTest, ADirectorySyncKeepsItsEntries) {
  write("old", "1");
  write("gone", "2");
  DurableFiles durable = record();
  write("tmp", "3");
  sync(durable, "tmp");
  fs::rename(root_ / "tmp", root_ / "old");
  fs::remove(root_ / "gone");
  write("unsynced", "4");
  sync(durable, ".");
  ASSERT_TRUE(durable.restore());
  EXPECT_EQ(read("old"), "3");
  EXPECT_FALSE(exists("gone"));
  EXPECT_FALSE(exists("tmp"));
  EXPECT_TRUE(exists("unsynced"));
  EXPECT_EQ(read("unsynced"), "");
}

// Without the directory's sync, the rename and unlink are undone.
TEST_F(DurableFilesTest, ARenameWithoutADirectorySyncIsUndone) {
  write("old", "1");
  write("gone", "2");
  DurableFiles durable = record();
  fs::rename(root_ / "old", root_ / "new");
  fs::remove(root_ / "gone");
  ASSERT_TRUE(durable.restore());
  EXPECT_EQ(read("old"), "1");
  EXPECT_EQ(read("gone"), "2");
  EXPECT_FALSE(exists("new"));
}

// The durable versions are in the hash: equal files, other durable
// versions, another hash; after sync_all the same again.
TEST_F(DurableFilesTest, TheHashIsOfTheDurableVersions) {
  write("log", "a");
  DurableFiles synced = record();
  DurableFiles unsynced = record();
  EXPECT_EQ(synced.hash(), unsynced.hash());
  append("log", "b");
  sync(synced, "log");
  EXPECT_NE(synced.hash(), unsynced.hash());
  ASSERT_TRUE(unsynced.sync_all());
  EXPECT_EQ(synced.hash(), unsynced.hash());
}

// A sync of something outside the tree (a device) changes nothing.
TEST_F(DurableFilesTest, ASyncOutsideTheTreeIsIgnored) {
  write("log", "a");
  DurableFiles durable = record();
  const std::uint64_t before = durable.hash();
  struct stat null {};
  ASSERT_EQ(stat("/dev/null", &null), 0);
  ASSERT_TRUE(durable.sync(null.st_dev, null.st_ino));
  EXPECT_EQ(durable.hash(), before);
}

} // namespace
} // namespace cmc::tracer
