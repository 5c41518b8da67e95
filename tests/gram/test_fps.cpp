// io/fps: chemfp's FPS files. The records' bytes against the bit positions
// they encode (bit i: bit i % 8 of byte i / 8, least significant first),
// the index (offsets, IDs, header, CRLF, no #num_bits), and every refusal,
// which names the file and line.
#include "core/errors.hpp"
#include "io/fps.hpp"
#include "support/test_support.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kmini {

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message of the UsageError that reading `text` as an FPS file throws ("" if none).
std::string refusal(const std::string& text) {
  const std::string path = write_file("kmini_test_bad.fps", text);
  std::string message;
  try {
    const fps::Index x = fps::read_index(path);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(x.rows() * x.bytes_per_row()));
    fps::read_rows(x, 0, x.rows(), bytes.data());
  } catch (const UsageError& e) {
    message = e.what();
  }
  std::remove(path.c_str());
  return message;
}

}  // namespace

TEST(Fps, DecodesBitsLeastSignificantFirst) {
  // Bits 0, 9 and 19 of 20: byte 0 = 0x01, byte 1 = 0x02, byte 2 = 0x08.
  std::uint8_t out[3] = {};
  EXPECT_EQ(fps::decode_hex("010208", 20, out), "");
  EXPECT_EQ(out[0], 0x01);
  EXPECT_EQ(out[1], 0x02);
  EXPECT_EQ(out[2], 0x08);
  EXPECT_EQ(fps::decode_hex("01F2A8", 24, out), "");  // upper case too
  EXPECT_EQ(out[1], 0xF2);
  EXPECT_EQ(fps::decode_hex("010218", 20, out), "bit 20 is set, past num_bits=20 (expected zeros)");
  EXPECT_EQ(fps::decode_hex("01x208", 20, out), "'x' at column 3 is not a hex digit");
}

TEST(Fps, IndexesRecordsIdsAndHeader) {
  const std::string text = "#FPS1\r\n#num_bits=16\r\n#type=T/1 a=b\r\n#software=S\r\nff00\tone\r\n0180\ttwo\tx\r\n";
  const std::string path = write_file("kmini_test_good.fps", text);
  EXPECT_TRUE(fps::is_fps(path));
  const fps::Index x = fps::read_index(path);
  EXPECT_EQ(x.num_bits, 16);
  EXPECT_EQ(x.hex_digits, 4);
  EXPECT_EQ(x.first_line, 5);
  EXPECT_EQ(x.ids, (std::vector<std::string>{"one", "two"}));  // fields after a second tab ignored
  EXPECT_EQ(x.type, "T/1 a=b");
  EXPECT_EQ(x.software, "S");
  ASSERT_EQ(x.offsets.size(), 3u);
  EXPECT_EQ(x.offsets[2], text.size());
  EXPECT_EQ(text.substr(x.offsets[1], 4), "0180");
  std::vector<std::uint8_t> bytes(4);
  fps::read_rows(x, 0, 2, bytes.data());
  EXPECT_EQ(bytes, (std::vector<std::uint8_t>{0xff, 0x00, 0x01, 0x80}));
  std::remove(path.c_str());
  // Without #num_bits: 4 x the first record's digits; without #FPS1 and .fps: not FPS.
  const std::string bare = write_file("kmini_test_bare.txt", "abcdef\tx\n");
  EXPECT_FALSE(fps::is_fps(bare));
  EXPECT_EQ(fps::read_index(bare).num_bits, 24);
  std::remove(bare.c_str());
}

TEST(Fps, RefusesMalformedFilesNamingTheLine) {
  EXPECT_NE(refusal("#num_bits=16\nabc\tx\n").find("kmini_test_bad.fps:2: 3 hex digits, expected an even number"),
            std::string::npos);
  EXPECT_NE(refusal("#num_bits=16\nabcd\tx\nab\ty\n").find(":3: 2 hex digits, expected 4 (num_bits=16)"),
            std::string::npos);
  EXPECT_NE(refusal("abcd\tx\nabcd\tx\n").find(":2: ID 'x' again (first on line 1), expected unique IDs"),
            std::string::npos);
  EXPECT_NE(refusal("abcd\n").find(":1: no tab after the fingerprint"), std::string::npos);
  EXPECT_NE(refusal("abcd\t\n").find(":1: an empty ID"), std::string::npos);
  EXPECT_NE(refusal("abcd\tx\n\nabcd\ty\n").find(":2: an empty line"), std::string::npos);
  EXPECT_NE(refusal("abcd\tx\n#num_bits=16\n").find(":2: a header line after the first record"), std::string::npos);
  EXPECT_NE(refusal("#num_bits=0\n").find(":1: #num_bits=0, expected a whole number of bits >= 1"), std::string::npos);
  EXPECT_NE(refusal("#FPS1\n").find("no fingerprint records"), std::string::npos);
  EXPECT_NE(refusal("#num_bits=12\nabcd\tx\n").find(":2: bit 15 is set, past num_bits=12"), std::string::npos);
  EXPECT_NE(
      refusal("#num_bits=16\nabcd\tx\nab-d\ty\n").find(":3: '-' at column 3 is not a hex digit (record 1, ID 'y')"),
      std::string::npos);
  EXPECT_EQ(refusal("#num_bits=16\nabcd\tx\n"), "");
}

// A compressed FPS file is named as such (by its content), not read as text.
TEST(Fps, RefusesCompressedFilesByTheirContent) {
  const std::string gz = write_file("kmini_test_bad.fps.gz", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8));
  EXPECT_TRUE(fps::is_fps(gz));
  KMINI_EXPECT_THROW_MSG(fps::read_index(gz), UsageError,
                         "kmini_test_bad.fps.gz: is gzip-compressed, expected an FPS file (kmini reads its inputs "
                         "uncompressed: decompress it first, e.g. gunzip)");
  std::remove(gz.c_str());
  EXPECT_NE(refusal(std::string("\xfd"
                                "7zXZ\x00\x00",
                                8))
                .find("kmini_test_bad.fps: is xz-compressed, expected an FPS file"),
            std::string::npos);
}

}  // namespace kmini
