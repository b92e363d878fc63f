#!/usr/bin/python3
"""Real exports: small models exported by torch.onnx.export with its defaults.

Run by hand with Debian's python3-torch (1.13) and python3-onnx; CI uses the
committed outputs. Nothing is renamed or cleaned after export: the files are
what a user of `torch.onnx.export` gets.

    /usr/bin/python3 test/models/gen_real_exports.py [family ...]

Families (Hugging Face-style code written here, narrow configs, random
weights): gpt2 (fused c_attn, Conv1D [in, out] weights, tied LM head, tanh
GELU, causal mask buffer; gpt2_deep: 4 layers, a batch of 16), llama (RMSNorm, rotary with rotate_half, SwiGLU,
causal mask built in forward), bert (token-type embeddings, attention mask
input, erf GELU); and torchvision's own VisionTransformer (vit: patchify
Conv, class token, nn.MultiheadAttention's fused in_proj, nn.Sequential MLP
whose scopes read `/encoder/layers/encoder_layer_0/mlp/mlp.0/MatMul`),
ResNet (torchvision's class with BasicBlocks, narrowed) and MobileNetV3
(torchvision's, small at width 0.25): exported in eval mode, BatchNorm
folded into the convolutions by the exporter; and unet (a small
segmentation network written here: ConvTranspose2d, F.interpolate, Upsample).

Each family folder gets:
  model.onnx            defaults: do_constant_folding=True, opset 13
  model_unfolded.onnx   do_constant_folding=False, opset 13
  model_opset17.onnx    defaults at opset 17 (families with LayerNorm)
  model_dynamic.onnx    language models: symbolic batch and seq dims
                        (dynamic_axes) at opset 11 (LLaMA 12)
  input_<name>.npy      the graph inputs
  output.npy            PyTorch's forward output
  labels.npy, loss.npy  cross_entropy labels and loss (language models) or
                        mean(output**2) (encoders)
  grads/<init>.npy      d loss / d initializer of model.onnx, keyed by the
                        ONNX initializer name (a folded `onnx::MatMul_<n>`
                        holds W^T, so its gradient is PyTorch's grad^T; a
                        tied weight's folded copy has none of its own: in
                        PyTorch it is one parameter, the original)
  grads_unfolded/<init>.npy  the same for model_unfolded.onnx
  modules.txt           model.named_modules(): what a plan names

`train` (resnet and mobilenet_v3, exported in training mode: BatchNorm with
batch statistics) writes <family>/train/; see export_train.

    /usr/bin/python3 test/models/gen_real_exports.py train
"""
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


# --- GPT-2 (transformers' modeling_gpt2, narrowed) ---------------------------

class Conv1D(nn.Module):
    """A Linear whose weight is stored [in, out] (transformers' Conv1D)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.2)
        self.bias = nn.Parameter(torch.randn(nf) * 0.1)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                       (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        n = cfg["n_positions"]
        self.register_buffer(
            "bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.embed_dim = cfg["n_embd"]
        self.num_heads = cfg["n_head"]
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)

    def _split_heads(self, t):
        t = t.view(t.size()[:-1] + (self.num_heads, self.head_dim))
        return t.permute(0, 2, 1, 3)

    def _merge_heads(self, t):
        t = t.permute(0, 2, 1, 3).contiguous()
        return t.view(t.size()[:-2] + (self.num_heads * self.head_dim,))

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query, key, value = map(self._split_heads, (query, key, value))
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value)
        return self.c_proj(self._merge_heads(attn_output))


class GPT2MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = Conv1D(4 * cfg["n_embd"], cfg["n_embd"])
        self.c_proj = Conv1D(cfg["n_embd"], 4 * cfg["n_embd"])

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg["n_embd"], eps=1e-5)
        self.attn = GPT2Attention(cfg)
        self.ln_2 = nn.LayerNorm(cfg["n_embd"], eps=1e-5)
        self.mlp = GPT2MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.wte = nn.Embedding(cfg["vocab_size"], cfg["n_embd"])
        self.wpe = nn.Embedding(cfg["n_positions"], cfg["n_embd"])
        self.h = nn.ModuleList([GPT2Block(cfg) for _ in range(cfg["n_layer"])])
        self.ln_f = nn.LayerNorm(cfg["n_embd"], eps=1e-5)

    def forward(self, input_ids):
        input_shape = input_ids.size()
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        hidden = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            hidden = block(hidden)
        return self.ln_f(hidden)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.transformer = GPT2Model(cfg)
        self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab_size"], bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, input_ids):
        return self.lm_head(self.transformer(input_ids))


# --- LLaMA (transformers' modeling_llama, narrowed) --------------------------

class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, seq_len):
        t = torch.arange(seq_len, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None, :, :], emb.sin()[None, None, :, :]


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.hidden_size = cfg["hidden_size"]
        self.num_heads = cfg["num_attention_heads"]
        self.head_dim = self.hidden_size // self.num_heads
        self.q_proj = nn.Linear(self.hidden_size, self.hidden_size, bias=False)
        self.k_proj = nn.Linear(self.hidden_size, self.hidden_size, bias=False)
        self.v_proj = nn.Linear(self.hidden_size, self.hidden_size, bias=False)
        self.o_proj = nn.Linear(self.hidden_size, self.hidden_size, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(self.head_dim)

    def forward(self, hidden_states, attention_mask):
        bsz, q_len, _ = hidden_states.size()
        shape = (bsz, q_len, self.num_heads, self.head_dim)
        q = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        k = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        v = self.v_proj(hidden_states).view(shape).transpose(1, 2)
        cos, sin = self.rotary_emb(q_len)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        attn = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        attn = attn + attention_mask
        attn = nn.functional.softmax(attn, dim=-1, dtype=torch.float32)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(out)


class LlamaMLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, i = cfg["hidden_size"], cfg["intermediate_size"]
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self_attn = LlamaAttention(cfg)
        self.mlp = LlamaMLP(cfg)
        self.input_layernorm = LlamaRMSNorm(cfg["hidden_size"])
        self.post_attention_layernorm = LlamaRMSNorm(cfg["hidden_size"])

    def forward(self, x, attention_mask):
        x = x + self.self_attn(self.input_layernorm(x), attention_mask)
        return x + self.mlp(self.post_attention_layernorm(x))


def make_causal_mask(bsz, tgt_len, dtype):
    mask = torch.full((tgt_len, tgt_len), torch.tensor(torch.finfo(dtype).min))
    mask_cond = torch.arange(mask.size(-1))
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len)


class LlamaModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
        self.layers = nn.ModuleList(
            [LlamaDecoderLayer(cfg) for _ in range(cfg["num_hidden_layers"])])
        self.norm = LlamaRMSNorm(cfg["hidden_size"])

    def forward(self, input_ids):
        bsz, seq_len = input_ids.shape
        mask = make_causal_mask(bsz, seq_len, torch.float32)
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.model = LlamaModel(cfg)
        self.lm_head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"], bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


# --- BERT (transformers' modeling_bert, narrowed) ----------------------------

class BertEmbeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["hidden_size"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], h)
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], h)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], h)
        self.LayerNorm = nn.LayerNorm(h, eps=1e-12)
        self.register_buffer(
            "position_ids", torch.arange(cfg["max_position_embeddings"]).expand((1, -1)))

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size()[1]
        position_ids = self.position_ids[:, 0:seq_length]
        e = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
             + self.position_embeddings(position_ids))
        return self.LayerNorm(e)


class BertSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["hidden_size"]
        self.num_attention_heads = cfg["num_attention_heads"]
        self.attention_head_size = h // self.num_attention_heads
        self.all_head_size = h
        self.query = nn.Linear(h, h)
        self.key = nn.Linear(h, h)
        self.value = nn.Linear(h, h)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        scores = scores + attention_mask
        probs = nn.functional.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (self.all_head_size,))


class BertSelfOutput(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["hidden_size"], cfg["hidden_size"])
        self.LayerNorm = nn.LayerNorm(cfg["hidden_size"], eps=1e-12)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dense(hidden_states) + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self = BertSelfAttention(cfg)
        self.output = BertSelfOutput(cfg)

    def forward(self, hidden_states, attention_mask):
        return self.output(self.self(hidden_states, attention_mask), hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["hidden_size"], cfg["intermediate_size"])

    def forward(self, x):
        return F.gelu(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["intermediate_size"], cfg["hidden_size"])
        self.LayerNorm = nn.LayerNorm(cfg["hidden_size"], eps=1e-12)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dense(hidden_states) + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention = BertAttention(cfg)
        self.intermediate = BertIntermediate(cfg)
        self.output = BertOutput(cfg)

    def forward(self, x, attention_mask):
        a = self.attention(x, attention_mask)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(cfg) for _ in range(cfg["num_hidden_layers"])])

    def forward(self, x, attention_mask):
        for layer in self.layer:
            x = layer(x, attention_mask)
        return x


class BertModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeddings = BertEmbeddings(cfg)
        self.encoder = BertEncoder(cfg)

    def forward(self, input_ids, token_type_ids, attention_mask):
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * torch.finfo(torch.float32).min
        return self.encoder(self.embeddings(input_ids, token_type_ids), ext)


# --- torchvision ---------------------------------------------------------------

class NarrowResNet(torchvision.models.ResNet):
    """torchvision.models.ResNet with layer widths 8, 16, 32, 64 instead of
    64 ... 512: the stem and everything else as torchvision builds it."""

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        return super()._make_layer(block, planes // 8, blocks, stride, dilate)

    def __init__(self, block, layers, num_classes):
        super().__init__(block, layers, num_classes=num_classes)
        self.fc = nn.Linear(64 * block.expansion, num_classes)


class TinyUNet(nn.Module):
    """A segmentation-style network: an encoder, ConvTranspose2d decoders
    (stride 2; kernel 3 with padding and output_padding, in groups), a skip
    connection, and F.interpolate / nn.Upsample heads (bilinear with and
    without align_corners, nearest): ONNX Resize and ConvTranspose."""

    def __init__(self, classes=4):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.enc2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.up1 = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec1 = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU())
        self.up2 = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.head = nn.Conv2d(8, classes, 1)
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        d1 = self.dec1(torch.cat([self.up1(e2), e1], dim=1))
        y = self.head(self.up2(d1))
        a = F.interpolate(y, scale_factor=0.5, mode="bilinear", align_corners=False)
        b = F.interpolate(y, size=(24, 24), mode="bilinear", align_corners=True)
        return self.upsample(a) + F.interpolate(b, size=(32, 32), mode="bilinear",
                                                align_corners=False)


def randomize_norms(model, gen):
    """BatchNorm running statistics and affine parameters away from their
    initial 0 / 1, as in a trained model (eval mode uses them)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(1 + 0.2 * torch.rand(m.running_var.shape, generator=gen))
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))


# --- export and references ----------------------------------------------------

def init_norms(model, gen):
    """LayerNorm / RMSNorm weights 1 + 0.1 randn and biases 0.1 randn, so a
    swapped scale and shift shows up."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.LayerNorm, LlamaRMSNorm)):
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=gen))
                if getattr(m, "bias", None) is not None:
                    m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))


def families():
    """Each family's builder draws from its own generator, so that one
    family can be regenerated alone and come out the same."""
    B, S = 4, 8
    gen = torch.Generator()
    ids = lambda v: torch.randint(0, v, (B, S), generator=gen)

    def gpt2():
        gen.manual_seed(1235)
        torch.manual_seed(1234)
        cfg = dict(vocab_size=96, n_positions=16, n_embd=32, n_head=4, n_layer=2)
        m = GPT2LMHeadModel(cfg)
        return m, {"input_ids": ids(96)}, "lm", True

    def gpt2_deep():
        # Pipeline stages (test/e2e/pipeline.test): 4 layers to split in 2
        # or 4, a batch of 16 for 8 microbatches on 2 data-parallel ranks.
        gen.manual_seed(1237)
        torch.manual_seed(1238)
        cfg = dict(vocab_size=96, n_positions=16, n_embd=32, n_head=4, n_layer=4)
        m = GPT2LMHeadModel(cfg)
        return m, {"input_ids": torch.randint(0, 96, (16, 8), generator=gen)}, "lm", False

    def llama():
        gen.manual_seed(1235)
        torch.manual_seed(1234)
        cfg = dict(vocab_size=96, hidden_size=32, intermediate_size=64,
                   num_attention_heads=4, num_hidden_layers=2)
        return LlamaForCausalLM(cfg), {"input_ids": ids(96)}, "lm", False

    def bert():
        gen.manual_seed(1235)
        torch.manual_seed(1234)
        cfg = dict(vocab_size=96, hidden_size=32, intermediate_size=64,
                   num_attention_heads=4, num_hidden_layers=2,
                   max_position_embeddings=16, type_vocab_size=2)
        mask = torch.ones(B, S, dtype=torch.long)
        mask[1, 6:] = 0
        mask[3, 5:] = 0
        inputs = {"input_ids": ids(96), "token_type_ids": ids(2), "attention_mask": mask}
        return BertModel(cfg), inputs, "mse", True

    def vit():
        gen.manual_seed(1235)
        torch.manual_seed(1234)
        m = torchvision.models.VisionTransformer(
            image_size=16, patch_size=8, num_layers=2, num_heads=2,
            hidden_dim=16, mlp_dim=32, num_classes=10)
        # torchvision zero-initializes the head and the attention biases:
        # the output would be 0 and the exporter would merge the equal
        # biases into one initializer. Trained weights are not like that.
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))
        return m, {"x": torch.randn(B, 3, 16, 16, generator=gen)}, "mse", True

    def resnet():
        gen.manual_seed(1235)
        # torchvision's ResNet class (its forward, names and BasicBlocks),
        # 8x narrower past the stem so that the file stays small.
        torch.manual_seed(1234)
        m = NarrowResNet(torchvision.models.resnet.BasicBlock, [1, 1, 1, 1],
                         num_classes=10)
        randomize_norms(m, gen)
        return m, {"x": torch.randn(B, 3, 32, 32, generator=gen)}, "mse", False

    def mobilenet_v3():
        gen.manual_seed(1235)
        torch.manual_seed(1234)
        from torchvision.models.mobilenetv3 import _mobilenet_v3_conf
        setting, last = _mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25)
        m = torchvision.models.MobileNetV3(setting, last, num_classes=10)
        randomize_norms(m, gen)
        with torch.no_grad():  # torchvision's classifier init is 0.01 * randn
            for lin in m.classifier.modules():
                if isinstance(lin, nn.Linear):
                    lin.weight.copy_(0.3 * torch.randn(lin.weight.shape, generator=gen))
        return m, {"x": torch.randn(B, 3, 32, 32, generator=gen)}, "mse", False

    def unet():
        gen.manual_seed(1235)
        torch.manual_seed(1234)
        m = TinyUNet()
        randomize_norms(m, gen)
        return m, {"x": torch.randn(B, 3, 16, 16, generator=gen)}, "mse", False

    return {"gpt2": gpt2, "gpt2_deep": gpt2_deep, "llama": llama, "bert": bert, "vit": vit,
            "resnet": resnet, "mobilenet_v3": mobilenet_v3, "unet": unet}


def loss_of(kind, out, labels):
    if kind == "lm":
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), labels.reshape(-1))
    return (out ** 2).mean()


def initializer_grads(path, model, grads):
    """Gradients keyed by the ONNX initializers of `path`: an initializer
    named after a parameter takes its gradient; one whose data is a
    parameter transposed (a folded W^T) takes the gradient transposed."""
    params = dict(model.named_parameters())
    out, unmatched = {}, []
    inits = onnx.load(path).graph.initializer
    names = {i.name for i in inits}
    for init in inits:
        data = numpy_helper.to_array(init)
        if data.dtype != np.float32:
            continue
        if init.name in params:
            out[init.name] = grads[init.name]
            continue
        for name, p in params.items():
            w = p.detach().numpy()
            if w.ndim == 2 and w.T.shape == data.shape and np.array_equal(w.T, data):
                if name in names:
                    # A tied weight's folded copy: PyTorch has one parameter,
                    # whose gradient is the original's.
                    print(f"  {init.name}: a copy of {name}^T (tied)")
                else:
                    out[init.name] = grads[name].T
                break
        else:
            # A buffer, or a Conv weight with BatchNorm folded in: no
            # parameter of PyTorch's is this tensor.
            unmatched.append(init.name)
    if unmatched:
        print(f"  {os.path.basename(path)}: {len(unmatched)} float initializers are "
              f"no parameter's data (buffers, BatchNorm folded into Conv): no gradient")
    return out


# Language models also exported with symbolic batch and sequence dims at an
# older opset (LLaMA's einsum needs 12), as deployment exports are.
DYNAMIC_OPSET = {"gpt2": 11, "llama": 12, "bert": 11}


def export(name, make):
    model, inputs, kind, has_ln_opset17 = make()
    gen = torch.Generator().manual_seed(1236)
    init_norms(model, gen)
    model.eval()
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    args = tuple(inputs.values())
    names = list(inputs.keys())
    exports = [("model.onnx", 13, True), ("model_unfolded.onnx", 13, False)]
    if has_ln_opset17:
        exports.append(("model_opset17.onnx", 17, True))
    if name in DYNAMIC_OPSET:
        exports.append(("model_dynamic.onnx", DYNAMIC_OPSET[name], True))
    for file, opset, fold in exports:
        dynamic = None
        if file == "model_dynamic.onnx":
            dynamic = {n: {0: "batch", 1: "seq"} for n in names + ["output"]}
        torch.onnx.export(model, args, os.path.join(d, file), opset_version=opset,
                          do_constant_folding=fold, input_names=names,
                          output_names=["output"], dynamic_axes=dynamic)
        onnx.checker.check_model(onnx.load(os.path.join(d, file)))
    for n, t in inputs.items():
        np.save(os.path.join(d, f"input_{n}.npy"), t.numpy())
    out = model(*args)
    np.save(os.path.join(d, "output.npy"), out.detach().numpy())
    labels = None
    if kind == "lm":
        labels = torch.randint(0, out.shape[-1], out.shape[:-1], generator=gen)
        np.save(os.path.join(d, "labels.npy"), labels.numpy())
    loss = loss_of(kind, out, labels)
    np.save(os.path.join(d, "loss.npy"), loss.detach().numpy().astype(np.float32))
    model.zero_grad()
    loss.backward()
    grads = {n: p.grad.numpy() for n, p in model.named_parameters()}
    for file, sub in (("model.onnx", "grads"), ("model_unfolded.onnx", "grads_unfolded")):
        gd = os.path.join(d, sub)
        os.makedirs(gd, exist_ok=True)
        for f in os.listdir(gd):
            os.remove(os.path.join(gd, f))
        for init, g in initializer_grads(os.path.join(d, file), model, grads).items():
            np.save(os.path.join(gd, init + ".npy"), np.ascontiguousarray(g, dtype=np.float32))
    with open(os.path.join(d, "modules.txt"), "w") as f:
        for n, m in model.named_modules():
            if n:
                f.write(f"{n} {type(m).__name__}\n")
    print(f"{name}: loss {loss.item():.6f}, output {list(out.shape)}")


# --- CNNs in training mode (BatchNorm with batch statistics) ----------------

TRAIN_BATCH = 8


def train_families():
    """ResNet and MobileNetV3 as for training: exported in train mode with
    training=TrainingMode.TRAINING, so that BatchNormalization keeps batch
    statistics and returns its running ones; MobileNetV3's dropout is 0
    (a random mask cannot be compared)."""
    fams = families()

    def mobilenet_v3():
        gen = torch.Generator().manual_seed(1235)
        torch.manual_seed(1234)
        from torchvision.models.mobilenetv3 import _mobilenet_v3_conf
        setting, last = _mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25)
        m = torchvision.models.MobileNetV3(setting, last, num_classes=10, dropout=0.0)
        randomize_norms(m, gen)
        with torch.no_grad():
            for lin in m.classifier.modules():
                if isinstance(lin, nn.Linear):
                    lin.weight.copy_(0.3 * torch.randn(lin.weight.shape, generator=gen))
        return m

    return {"resnet": lambda: fams["resnet"]()[0], "mobilenet_v3": mobilenet_v3}


def running_stats(model):
    return {n: b.detach().numpy().copy() for n, b in model.named_buffers()
            if n.endswith("running_mean") or n.endswith("running_var")}


def eval_after_step(model, x, grads, stats, lr=0.1):
    """The model after one SGD step (lr 0.1, tp-compile --train's default)
    with the updated running statistics, run in eval mode on x: what a
    trained model saved by tp-run --save computes."""
    import copy
    m = copy.deepcopy(model)
    with torch.no_grad():
        for n, p in m.named_parameters():
            p -= lr * torch.from_numpy(grads[n])
        for n, b in m.named_buffers():
            if n in stats:
                b.copy_(torch.from_numpy(stats[n]))
    m.eval()
    with torch.no_grad():
        return m(x).numpy()


def ddp_step(model, x, labels, ranks):
    """One DDP step of `model` (train mode, local BatchNorm statistics):
    each rank's copy runs its part of the batch; the loss is the mean of the
    ranks' losses (the whole batch's), the gradients are averaged, the
    running statistics are rank 0's (DDP broadcasts rank 0's buffers)."""
    import copy
    losses, grads, stats = [], None, None
    for r, (xr, lr) in enumerate(zip(x.chunk(ranks), labels.chunk(ranks))):
        m = copy.deepcopy(model)
        m.train()
        loss = F.cross_entropy(m(xr), lr)
        loss.backward()
        g = {n: p.grad.numpy() / ranks for n, p in m.named_parameters()}
        grads = g if grads is None else {n: grads[n] + g[n] for n in g}
        losses.append(loss.item())
        if r == 0:
            stats = running_stats(m)
    return np.float32(np.mean(losses)), grads, stats


def export_train(name, make):
    """<family>/train/: model.onnx (opset 13: BatchNormalization with five
    outputs), model_opset15.onnx (training_mode = 1), input_x.npy (a batch
    of 8), labels.npy; per configuration (`sync`: one device, or DDP with
    SyncBatchNorm; `dp2`, `dp4`: DDP with each rank's own statistics) the
    cross-entropy loss.npy, grads/<init>.npy and running/<buffer>.npy (the
    running statistics after the step); sync/eval_after_step.npy: the model
    after one SGD step (lr 0.1) with those statistics, in eval mode."""
    model = make()
    d = os.path.join(HERE, name, "train")
    os.makedirs(d, exist_ok=True)
    gen = torch.Generator().manual_seed(77)
    # 64x64: the last stage still has 2x2 positions, so that a rank of dp=4
    # (2 samples) takes statistics over 8 values, not 2 (with 2, the
    # backward pass of BatchNorm cancels to eps / var and only rounding is
    # left to compare).
    x = torch.randn(TRAIN_BATCH, 3, 64, 64, generator=gen)
    labels = torch.randint(0, 10, (TRAIN_BATCH,), generator=gen)
    np.save(os.path.join(d, "input_x.npy"), x.numpy())
    np.save(os.path.join(d, "labels.npy"), labels.numpy())
    for file, opset in (("model.onnx", 13), ("model_opset15.onnx", 15)):
        import copy
        m = copy.deepcopy(model)
        m.train()
        torch.onnx.export(m, (x,), os.path.join(d, file), opset_version=opset,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["x"],
                          output_names=["output"])
        onnx.checker.check_model(onnx.load(os.path.join(d, file)))
    # Exporting in training mode runs the model once, which updates its
    # running statistics before they are written: the references start
    # from the file's.
    inits = {i.name: numpy_helper.to_array(i)
             for i in onnx.load(os.path.join(d, "model.onnx")).graph.initializer}
    with torch.no_grad():
        for n, b in model.named_buffers():
            if n in inits:
                b.copy_(torch.from_numpy(inits[n].copy()))
    for config, ranks in (("sync", 1), ("dp2", 2), ("dp4", 4)):
        loss, grads, stats = ddp_step(model, x, labels, ranks)
        c = os.path.join(d, config)
        for sub in ("grads", "running"):
            os.makedirs(os.path.join(c, sub), exist_ok=True)
            for f in os.listdir(os.path.join(c, sub)):
                os.remove(os.path.join(c, sub, f))
        np.save(os.path.join(c, "loss.npy"), loss)
        for init, g in initializer_grads(os.path.join(d, "model.onnx"), model, grads).items():
            np.save(os.path.join(c, "grads", init + ".npy"), np.ascontiguousarray(g, dtype=np.float32))
        for n, v in stats.items():
            np.save(os.path.join(c, "running", n + ".npy"), v.astype(np.float32))
        if config == "sync":
            np.save(os.path.join(c, "eval_after_step.npy"), eval_after_step(model, x, grads, stats))
        print(f"{name} train {config}: loss {loss:.6f}")


if __name__ == "__main__":
    fams = families()
    names = sys.argv[1:] or list(fams) + ["train"]
    for name in names:
        if name == "train":
            for n, make in train_families().items():
                export_train(n, make)
        else:
            export(name, fams[name])
