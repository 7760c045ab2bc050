#!/usr/bin/env bash
# Recreates the audio probe's test data (services/moderation/ffmpeg_audio_probe_test.cc and
# the fuzz seed corpus) with Debian 12's ffmpeg (5.1) and opus-tools; python3 rewrites the
# header of the two "lying" files. Deterministic enough: ffmpeg runs with -fflags +bitexact
# and opusenc with a fixed serial, so the bytes change only with the encoders' versions; the
# tests check formats and durations (within 30 ms), never bytes.
# Usage: services/moderation/testdata/regenerate.sh   (writes next to itself)
set -euo pipefail
cd "$(dirname "$0")"

ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
# A speech-like mono signal: a 180 Hz voice with two harmonics, its loudness wobbling at
# 4 Hz (syllables). $1 = seconds.
voice() {
  echo "aevalsrc=0.25*(sin(2*PI*180*t)+0.5*sin(2*PI*360*t)+0.25*sin(2*PI*540*t))*(0.6+0.4*sin(2*PI*4*t)):s=48000:c=mono:d=$1"
}
# Chrome's MediaRecorder: WebM/Opus, 48 kHz mono, 20 ms packets. $1 = seconds, $2 = file,
# $3 = bit rate (24k unless given).
webm_opus() {
  ff -f lavfi -i "$(voice "$1")" -c:a libopus -b:a "${3:-24k}" -application voip -frame_duration 20 \
    -map_metadata -1 -fflags +bitexact -flags:a +bitexact "$2"
}
# Safari / iOS: MP4 (M4A) with AAC-LC (1024-sample frames, 21.3 ms at 48 kHz). $1 = seconds,
# $2 = file, $3 = bit rate, the rest: muxer options.
m4a_aac() {
  ff -f lavfi -i "$(voice "$1")" -c:a aac -b:a "$3" -map_metadata -1 -fflags +bitexact \
    -flags:a +bitexact "${@:4}" "$2"
}
# Firefox / Android: Ogg/Opus, made by opus-tools' opusenc from a WAV. $1 = seconds,
# $2 = file, $3 = bit rate in kb/s (24 unless given).
ogg_opus() {
  local wav
  wav=$(mktemp --suffix=.wav)
  ff -f lavfi -i "$(voice "$1")" -c:a pcm_s16le -fflags +bitexact -flags:a +bitexact "$wav"
  opusenc --quiet --bitrate "${3:-24}" --framesize 20 --serial 1414 --discard-comments "$wav" "$2"
  rm -f "$wav"
}

# note_3s.webm: 3 s WebM/Opus, the everyday note (accepted: webm/opus, ~3.0 s).
webm_opus 3 note_3s.webm
# note_3s.ogg: 3 s Ogg/Opus from opusenc (accepted: ogg/opus, ~3.0 s).
ogg_opus 3 note_3s.ogg
# note_3s.m4a: 3 s MP4/AAC, moov at the front (accepted: mp4/aac, ~3.0 s).
m4a_aac 3 note_3s.m4a 64k -movflags +faststart
# note_3s_fragmented.m4a: 3 s fragmented MP4/AAC at 32 kb/s (empty moov + moof fragments), the shape a
# streaming recorder writes (accepted: mp4/aac, ~3.0 s).
m4a_aac 3 note_3s_fragmented.m4a 32k -movflags +frag_keyframe+empty_moov+default_base_moof \
  -frag_duration 500000
# note_7s.webm / note_7s.ogg / note_7s.m4a: 7.0 s of signal, the longest note the rules allow
# (accepted; the measured duration includes the codec's padding, see the test).
webm_opus 7 note_7s.webm
ogg_opus 7 note_7s.ogg
m4a_aac 7 note_7s.m4a 64k -movflags +faststart
# note_9s.ogg: 9 s Ogg/Opus at 16 kb/s (accepted by the probe with ~9.0 s; the domain refuses too_long).
ogg_opus 9 note_9s.ogg 16
# note_live.webm: WebM written to a pipe, as Chrome's MediaRecorder does: no Duration, no
# cues, unknown-size segment and clusters (accepted: webm/opus, ~3.0 s).
ff -f lavfi -i "$(voice 3)" -c:a libopus -b:a 24k -application voip -frame_duration 20 \
    -map_metadata -1 -fflags +bitexact -flags:a +bitexact -live 1 -f webm - >note_live.webm
# note_9s_header_says_2s.webm: 9 s WebM/Opus whose Segment Info Duration (EBML 0x4489, an
# 8-byte float in ms) is rewritten to 2000 (accepted with ~9.0 s: the header is ignored).
webm_opus 9 note_9s_header_says_2s.webm 12k
# note_9s_header_says_2s.m4a: 9 s MP4/AAC whose mvhd and mdhd durations are rewritten to
# 2 s in their own timescales (accepted with ~9.0 s: the sample table decides).
m4a_aac 9 note_9s_header_says_2s.m4a 24k -movflags +faststart
python3 - <<'PY'
import struct
# WebM: Duration element id 0x4489, size 0x88 (8 bytes), big-endian double in TimecodeScale
# units (1 ms by default).
b = bytearray(open("note_9s_header_says_2s.webm", "rb").read())
i = b.find(b"\x44\x89\x88")
assert i > 0, "no 8-byte Duration element"
b[i + 3:i + 11] = struct.pack(">d", 2000.0)
open("note_9s_header_says_2s.webm", "wb").write(b)
# MP4: mvhd and mdhd (version 0): timescale u32 at +12, duration u32 at +16 after the
# fullbox header (size, type, version/flags = 12 bytes, then creation and modification).
b = bytearray(open("note_9s_header_says_2s.m4a", "rb").read())
for box in (b"mvhd", b"mdhd"):
    i = b.find(box)
    assert i > 0 and b[i + 4] == 0, box
    ts = struct.unpack(">I", b[i + 16:i + 20])[0]
    b[i + 20:i + 24] = struct.pack(">I", 2 * ts)
open("note_9s_header_says_2s.m4a", "wb").write(b)
PY
# video.webm: a 1 s 16x16 VP8 video next to a 1 s Opus track (refused: a video stream).
ff -f lavfi -i "color=c=gray:s=16x16:r=5:d=1" -f lavfi -i "$(voice 1)" -c:v libvpx -b:v 20k \
  -c:a libopus -b:a 24k -map_metadata -1 -fflags +bitexact -flags:v +bitexact \
  -flags:a +bitexact video.webm
# video_only.webm: the same video without audio (refused: no audio stream).
ff -f lavfi -i "color=c=gray:s=16x16:r=5:d=1" -c:v libvpx -b:v 20k -map_metadata -1 \
  -fflags +bitexact -flags:v +bitexact video_only.webm
# two_audio.webm: two 0.5 s Opus tracks in one WebM (refused: more than one stream).
ff -f lavfi -i "$(voice 0.5)" -f lavfi -i "$(voice 0.5)" -map 0 -map 1 -c:a libopus -b:a 24k \
  -map_metadata -1 -fflags +bitexact -flags:a +bitexact two_audio.webm
# vorbis.webm: WebM with Vorbis instead of Opus (refused: wrong codec for the container).
ff -f lavfi -i "$(voice 1)" -c:a libvorbis -b:a 48k -map_metadata -1 -fflags +bitexact \
  -flags:a +bitexact vorbis.webm 2>/dev/null || rm -f vorbis.webm
# opus.m4a: Opus in MP4 (refused: the mov family is accepted with AAC only).
ff -f lavfi -i "$(voice 1)" -c:a libopus -b:a 24k -map_metadata -1 -fflags +bitexact \
  -flags:a +bitexact -f mp4 opus.m4a
# flac.flac: a real 0.3 s 8 kHz FLAC file (refused: not one of the accepted containers).
ff -f lavfi -i "$(voice 0.3)" -ar 8000 -c:a flac -map_metadata -1 -fflags +bitexact -flags:a +bitexact \
  flac.flac
# mp3.mp3: a real 1 s MP3 (refused: not one of the accepted containers).
ff -f lavfi -i "$(voice 1)" -c:a libmp3lame -b:a 32k -map_metadata -1 -fflags +bitexact \
  -flags:a +bitexact -write_xing 0 -id3v2_version 0 mp3.mp3
# wav.wav: 0.2 s of PCM in WAV (refused: not one of the accepted containers).
ff -f lavfi -i "$(voice 0.2)" -ar 8000 -c:a pcm_s16le -fflags +bitexact -flags:a +bitexact \
  wav.wav
# truncated.webm / truncated.ogg / truncated.m4a: the first half of the 3 s notes' bytes.
for f in webm ogg m4a; do
  size=$(stat -c %s "note_3s.$f")
  head -c $((size / 2)) "note_3s.$f" >"truncated.$f"
done
# not_audio.txt: text (refused: no demuxer recognises it).
printf 'This is not a voice note, just some text pretending to be one.\n' >not_audio.txt
ls -l
